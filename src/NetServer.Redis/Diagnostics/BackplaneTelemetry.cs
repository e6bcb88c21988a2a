using System;
using System.Collections.Generic;
using System.Diagnostics.Metrics;

namespace NetServer.Redis.Diagnostics;

/// <summary>
/// The Redis package's meter, named <see cref="Name"/>. The totals a <see cref="RedisBackplane"/>
/// keeps anyway (published, received, failed, dropped, in flight) are observable instruments read
/// only when a collector asks, from the backplanes started now (added at start, removed at
/// dispose); local deliveries, which nothing counted before, are a counter recorded where they
/// happen (an <c>Enabled</c> check when nobody listens). Every measurement carries
/// <c>messaging.system</c> = <c>redis</c> and <c>messaging.client.id</c> = the node's id.
/// </summary>
internal static class BackplaneTelemetry
{
    /// <summary>The meter's name ("NetServer.Redis"); <c>AddMeter("NetServer.*")</c> takes it too.</summary>
    public const string Name = "NetServer.Redis";

    /// <summary>netserver.backplane.origin of a delivery: a send made on this node.</summary>
    public const string Local = "local";

    /// <summary>netserver.backplane.origin of a delivery: a frame another node published.</summary>
    public const string Remote = "remote";

    private static readonly object s_lock = new();
    private static readonly List<RedisBackplane> s_nodes = new();

    public static readonly Meter Meter = new(Name, typeof(BackplaneTelemetry).Assembly.GetName().Version?.ToString());

    /// <summary>Local deliveries (<see cref="ILocalDelivery"/> calls that returned true), tagged by origin.</summary>
    public static readonly Counter<long> Deliveries = Meter.CreateCounter<long>(
        "netserver.backplane.deliveries", "{delivery}", "Deliveries this node's sessions took: a send to all once, a session once, each group member once; netserver.backplane.origin local or remote.");

    private static readonly ObservableCounter<long> s_sent = Meter.CreateObservableCounter(
        "messaging.client.sent.messages", ObserveSent, "{message}", "Frames a started backplane published to Redis (one per send, whatever the number of nodes); error.type on those Redis did not take.");

    private static readonly ObservableCounter<long> s_consumed = Meter.CreateObservableCounter(
        "messaging.client.consumed.messages", () => Observe(n => n.Received, "process"), "{message}", "Frames from other nodes a started backplane delivered here.");

    private static readonly ObservableCounter<long> s_dropped = Meter.CreateObservableCounter(
        "netserver.backplane.dropped", () => Observe(n => n.Dropped, null), "{message}", "Sends not published because BackplaneOptions.MaxPendingPublishes publishes were in flight.");

    private static readonly ObservableCounter<long> s_receiveDropped = Meter.CreateObservableCounter(
        "netserver.backplane.receive_dropped", () => Observe(n => n.ReceiveDropped, null), "{message}", "Frames from other nodes dropped unhandled: BackplaneOptions.MaxReceiveBacklog frames or MaxReceiveBacklogBytes bytes were waiting on this node, or the frame alone was larger than MaxReceiveBacklogBytes.");

    private static readonly ObservableCounter<long> s_callbackFailures = Meter.CreateObservableCounter(
        "netserver.backplane.callback_failures", () => Observe(n => n.CallbackFailures, null), "{call}", "Calls into code not the backplane's (a local delivery, a PublishFailed handler, a relay's handler, a trace or meter listener) that threw and were isolated.");

    private static readonly ObservableUpDownCounter<long> s_pending = Meter.CreateObservableUpDownCounter(
        "netserver.backplane.pending_publishes", () => Observe(n => n.PendingPublishes, null), "{message}", "Publishes sent to Redis and not yet acknowledged.");

    /// <summary>The tags every measurement of <paramref name="nodeId"/> carries, with <c>netserver.backplane.origin</c> = <paramref name="origin"/> when given.</summary>
    public static KeyValuePair<string, object?>[] Tags(Guid nodeId, string? origin = null) => origin is null
        ? [new("messaging.system", "redis"), new("messaging.client.id", nodeId.ToString("D"))]
        : [new("messaging.system", "redis"), new("messaging.client.id", nodeId.ToString("D")), new("netserver.backplane.origin", origin)];

    /// <summary>Observes <paramref name="node"/>, just started.</summary>
    public static void Add(RedisBackplane node)
    {
        // Touch the instruments so they exist (static initialisation) before anyone lists the meter.
        _ = s_sent;
        _ = s_consumed;
        _ = s_dropped;
        _ = s_receiveDropped;
        _ = s_callbackFailures;
        _ = s_pending;
        lock (s_lock)
        {
            if (!s_nodes.Contains(node))
                s_nodes.Add(node);
        }
    }

    /// <summary>Stops observing <paramref name="node"/> (disposed).</summary>
    public static void Remove(RedisBackplane node)
    {
        lock (s_lock)
            s_nodes.Remove(node);
    }

    private static RedisBackplane[] Snapshot()
    {
        lock (s_lock)
            return s_nodes.ToArray();
    }

    private static List<Measurement<long>> Observe(Func<RedisBackplane, long> value, string? operation)
    {
        var nodes = Snapshot();
        var measurements = new List<Measurement<long>>(nodes.Length);
        foreach (var node in nodes)
        {
            var tags = new List<KeyValuePair<string, object?>>(Tags(node.NodeId));
            if (operation is not null)
                tags.Add(new("messaging.operation.name", operation));
            measurements.Add(new Measurement<long>(value(node), tags));
        }

        return measurements;
    }

    private static List<Measurement<long>> ObserveSent()
    {
        var nodes = Snapshot();
        var measurements = new List<Measurement<long>>(nodes.Length * 2);
        foreach (var node in nodes)
        {
            var tags = new List<KeyValuePair<string, object?>>(Tags(node.NodeId)) { new("messaging.operation.name", "publish") };
            measurements.Add(new Measurement<long>(node.Published, tags));
            var failed = node.FramePublishFailures;
            if (failed != 0)
                measurements.Add(new Measurement<long>(failed, new List<KeyValuePair<string, object?>>(tags) { new("error.type", "redis_unavailable") }));
        }

        return measurements;
    }
}
