using System.Collections.Generic;
using System.Diagnostics.Metrics;

namespace NetServer.Diagnostics;

/// <summary>A started server whose totals the observable instruments read (see <see cref="ObservedServers"/>).</summary>
internal interface IObservedServer
{
    EndpointTags? MetricTags { get; }

    long BytesSent { get; }

    long BytesReceived { get; }

    /// <summary>Datagrams sent, received and dropped (UDP servers); false for stream servers.</summary>
    bool TryGetDatagrams(out long sent, out long received, out long dropped);

    /// <summary>Whole messages of <paramref name="kind"/> (<see cref="MessageMetrics"/>) its sessions received; 0 for UDP servers.</summary>
    long MessagesReceived(int kind);

    /// <summary>Whole messages of <paramref name="kind"/> its sessions sent (multicasts included, one per session reached); 0 for UDP servers.</summary>
    long MessagesSent(int kind);
}

/// <summary>
/// The observable instruments (bytes, datagrams): they read the totals the engine keeps anyway,
/// only when a collector asks, from the servers started now (added at start, removed at stop, so a
/// stopped server is not kept alive). The hot path gains nothing.
/// </summary>
internal static class ObservedServers
{
    private static readonly object s_lock = new();
    private static readonly List<IObservedServer> s_servers = new();

    private static readonly ObservableCounter<long> s_io = NetServerTelemetry.Meter.CreateObservableCounter(
        "netserver.io", ObserveBytes, "By", "Bytes sent (network.io.direction=transmit) and received (receive) by started servers.");

    private static readonly ObservableCounter<long> s_datagrams = NetServerTelemetry.Meter.CreateObservableCounter(
        "netserver.udp.datagrams", ObserveDatagrams, "{datagram}", "Datagrams sent (transmit) and received (receive) by started UDP servers.");

    private static readonly ObservableCounter<long> s_dropped = NetServerTelemetry.Meter.CreateObservableCounter(
        "netserver.udp.dropped", ObserveDropped, "{datagram}", "Datagrams a started secure UDP server dropped (failed authentication, replays, unknown sessions).");

    private static readonly ObservableCounter<long> s_messages = NetServerTelemetry.Meter.CreateObservableCounter(
        "netserver.messages.received", () => ObserveMessages(sent: false), "{message}", "Whole messages (WebSocket data messages, length-prefixed byte messages) the sessions of started servers received.");

    private static readonly ObservableCounter<long> s_messagesSent = NetServerTelemetry.Meter.CreateObservableCounter(
        "netserver.messages.sent", () => ObserveMessages(sent: true), "{message}", "Whole messages (WebSocket data messages, length-prefixed byte messages) the sessions of started servers sent, a multicast once per session it reached.");

    public static void Add(IObservedServer server)
    {
        _ = s_messages;
        _ = s_messagesSent;
        // Touch the instruments so they exist (static initialisation) before anyone lists the meter.
        _ = s_io;
        _ = s_datagrams;
        _ = s_dropped;
        lock (s_lock)
            s_servers.Add(server);
    }

    public static void Remove(IObservedServer server)
    {
        lock (s_lock)
            s_servers.Remove(server);
    }

    private static IObservedServer[] Snapshot()
    {
        lock (s_lock)
            return s_servers.ToArray();
    }

    private static IEnumerable<Measurement<long>> ObserveBytes()
    {
        var servers = Snapshot();
        var measurements = new List<Measurement<long>>(servers.Length * 2);
        foreach (var server in servers)
        {
            if (server.MetricTags is not { } tags)
                continue;
            measurements.Add(new Measurement<long>(server.BytesSent, tags.With("network.io.direction", "transmit")));
            measurements.Add(new Measurement<long>(server.BytesReceived, tags.With("network.io.direction", "receive")));
        }

        return measurements;
    }

    private static IEnumerable<Measurement<long>> ObserveDatagrams()
    {
        var measurements = new List<Measurement<long>>();
        foreach (var server in Snapshot())
        {
            if (server.MetricTags is not { } tags || !server.TryGetDatagrams(out var sent, out var received, out _))
                continue;
            measurements.Add(new Measurement<long>(sent, tags.With("network.io.direction", "transmit")));
            measurements.Add(new Measurement<long>(received, tags.With("network.io.direction", "receive")));
        }

        return measurements;
    }

    private static List<Measurement<long>> ObserveMessages(bool sent)
    {
        var measurements = new List<Measurement<long>>();
        foreach (var server in Snapshot())
        {
            if (server.MetricTags is not { } tags)
                continue;
            for (var kind = 0; kind < MessageMetrics.Kinds; kind++)
            {
                var count = sent ? server.MessagesSent(kind) : server.MessagesReceived(kind);
                if (count != 0)
                    measurements.Add(new Measurement<long>(count, tags.With("netserver.protocol", MessageMetrics.Name(kind))));
            }
        }

        return measurements;
    }

    private static IEnumerable<Measurement<long>> ObserveDropped()
    {
        var measurements = new List<Measurement<long>>();
        foreach (var server in Snapshot())
        {
            if (server.MetricTags is { } tags && server.TryGetDatagrams(out _, out _, out var dropped))
                measurements.Add(new Measurement<long>(dropped, tags.ToArray()));
        }

        return measurements;
    }
}
