using System;
using System.Collections.Generic;
using System.Diagnostics.Metrics;
using System.Net;
using System.Text;

namespace NetServer.P2P.Diagnostics;

/// <summary>
/// The P2P package's meter, named <see cref="Name"/>: observable instruments that read the totals a
/// started <see cref="RelayServer"/> keeps anyway (<see cref="RelayServer.GetStatistics"/>), only
/// when a collector asks, from the relays started now (added at start, removed at stop or dispose,
/// so a stopped relay is not kept alive). Routing gains nothing.
/// </summary>
internal static class RelayTelemetry
{
    /// <summary>The meter's name ("NetServer.P2P"); <c>AddMeter("NetServer.*")</c> takes it too.</summary>
    public const string Name = "NetServer.P2P";

    private static readonly object s_lock = new();
    private static readonly List<(RelayServer Relay, KeyValuePair<string, object?>[] Tags)> s_relays = new();

    // netserver.relay.status values: the RelayStatus names in snake_case ("unknown_peer"), worked out once.
    private static readonly string[] s_statuses = StatusNames();

    public static readonly Meter Meter = new(Name, typeof(RelayTelemetry).Assembly.GetName().Version?.ToString());

    private static readonly ObservableUpDownCounter<long> s_peers = Meter.CreateObservableUpDownCounter(
        "netserver.relay.peers", () => Observe(s => s.Peers), "{peer}", "Peers registered with a started relay now.");

    private static readonly ObservableUpDownCounter<long> s_connections = Meter.CreateObservableUpDownCounter(
        "netserver.relay.connections", () => Observe(s => s.Connections), "{connection}", "Connections to a started relay now, registered or not.");

    private static readonly ObservableCounter<long> s_registrations = Meter.CreateObservableCounter(
        "netserver.relay.registrations", () => Observe(s => s.Registrations), "{registration}", "Registrations a started relay accepted.");

    private static readonly ObservableCounter<long> s_received = Meter.CreateObservableCounter(
        "netserver.relay.messages.received", () => Observe(s => s.MessagesReceived), "{message}", "Envelopes a started relay received from registered peers.");

    private static readonly ObservableCounter<long> s_relayed = Meter.CreateObservableCounter(
        "netserver.relay.messages.relayed", () => Observe(s => s.MessagesRelayed), "{message}", "Copies a started relay delivered into peers' queues (a message to a room once per member reached).");

    private static readonly ObservableCounter<long> s_bytes = Meter.CreateObservableCounter(
        "netserver.relay.io", () => Observe(s => s.BytesRelayed), "By", "Bytes of the copies a started relay delivered into peers' queues.");

    private static readonly ObservableCounter<long> s_refusals = Meter.CreateObservableCounter(
        "netserver.relay.refusals", ObserveRefusals, "{refusal}", "What a started relay refused (messages, requests, registrations), by netserver.relay.status.");

    /// <summary>Observes <paramref name="relay"/>, just started, tagged with its bound endpoint.</summary>
    public static void Add(RelayServer relay)
    {
        // Touch the instruments so they exist (static initialisation) before anyone lists the meter.
        _ = s_peers;
        _ = s_connections;
        _ = s_registrations;
        _ = s_received;
        _ = s_relayed;
        _ = s_bytes;
        _ = s_refusals;
        var tags = relay.Endpoint switch
        {
            IPEndPoint ip => new KeyValuePair<string, object?>[] { new("server.address", ip.Address.ToString()), new("server.port", relay.Port) },
            DnsEndPoint dns => new KeyValuePair<string, object?>[] { new("server.address", dns.Host), new("server.port", relay.Port) },
            _ => new KeyValuePair<string, object?>[] { new("server.port", relay.Port) },
        };
        lock (s_lock)
        {
            s_relays.RemoveAll(r => ReferenceEquals(r.Relay, relay));
            s_relays.Add((relay, tags));
        }
    }

    /// <summary>Stops observing <paramref name="relay"/> (stopped or disposed).</summary>
    public static void Remove(RelayServer relay)
    {
        lock (s_lock)
            s_relays.RemoveAll(r => ReferenceEquals(r.Relay, relay));
    }

    private static (RelayServer Relay, KeyValuePair<string, object?>[] Tags)[] Snapshot()
    {
        lock (s_lock)
            return s_relays.ToArray();
    }

    private static List<Measurement<long>> Observe(Func<RelayStatistics, long> value)
    {
        var relays = Snapshot();
        var measurements = new List<Measurement<long>>(relays.Length);
        foreach (var (relay, tags) in relays)
            measurements.Add(new Measurement<long>(value(relay.GetStatistics()), tags));
        return measurements;
    }

    private static List<Measurement<long>> ObserveRefusals()
    {
        var measurements = new List<Measurement<long>>();
        foreach (var (relay, tags) in Snapshot())
        {
            var statistics = relay.GetStatistics();
            for (var status = 1; status < s_statuses.Length; status++)
            {
                var count = statistics.RefusalsOf((RelayStatus)status);
                if (count == 0)
                    continue;
                var tagged = new KeyValuePair<string, object?>[tags.Length + 1];
                tags.CopyTo(tagged, 0);
                tagged[tags.Length] = new("netserver.relay.status", s_statuses[status]);
                measurements.Add(new Measurement<long>(count, tagged));
            }
        }

        return measurements;
    }

    private static string[] StatusNames()
    {
        var names = new string[(int)RelayStatus.NodeUnavailable + 1];
        for (var i = 0; i < names.Length; i++)
        {
            var name = ((RelayStatus)i).ToString();
            var snake = new StringBuilder(name.Length + 4);
            foreach (var c in name)
            {
                if (char.IsUpper(c) && snake.Length > 0)
                    snake.Append('_');
                snake.Append(char.ToLowerInvariant(c));
            }

            names[i] = snake.ToString();
        }

        return names;
    }
}
