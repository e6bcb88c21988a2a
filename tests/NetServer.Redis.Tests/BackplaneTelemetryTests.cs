using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Diagnostics.Metrics;
using System.Linq;
using System.Text;
using System.Threading.Tasks;
using Xunit;

namespace NetServer.Redis.Tests;

/// <summary>
/// The "NetServer.Redis" meter on two real nodes over a real redis-server. Measurements are picked
/// by the node's id (messaging.client.id), so other tests' nodes running meanwhile do not disturb it.
/// </summary>
public sealed class BackplaneTelemetryTests
{
    private static readonly TimeSpan s_wait = TimeSpan.FromSeconds(10);

    private static byte[] Text(string text) => Encoding.UTF8.GetBytes(text);

    [RedisFact]
    public async Task Publishes_receipts_failures_and_local_deliveries_are_measured()
    {
        var recorded = new ConcurrentQueue<(string Name, long Value, Dictionary<string, object?> Tags)>();
        using var listener = new MeterListener
        {
            InstrumentPublished = (instrument, l) =>
            {
                if (instrument.Meter.Name == "NetServer.Redis")
                    l.EnableMeasurementEvents(instrument);
            },
        };
        listener.SetMeasurementEventCallback<long>((instrument, value, tags, _) => recorded.Enqueue((instrument.Name, value, Copy(tags))));
        listener.Start();

        await using var redis = await RedisProcess.StartAsync();
        var d1 = new RecordingDelivery(); var d2 = new RecordingDelivery();
        var n1 = new RedisBackplane(d1);
        await n1.StartAsync(redis.Configuration);
        await using var n2 = new RedisBackplane(d2);
        await n2.StartAsync(redis.Configuration);
        Guid a = d1.AddSession(), b = d2.AddSession(), c = d2.AddSession();
        n1.JoinGroup("room", a); n2.JoinGroup("room", b); n2.JoinGroup("room", c);

        Assert.True(await n1.SendToGroupAsync("room", Text("g")).WaitAsync(s_wait)); // a here, b and c on n2
        Assert.True(await n1.SendToSessionAsync(a, Text("local")).WaitAsync(s_wait)); // local: not published
        await Task.WhenAll(d2.Arrived(b, "g"), d2.Arrived(c, "g"), d1.Arrived(a, "local")).WaitAsync(s_wait);

        var n1Id = n1.NodeId.ToString("D");
        var n2Id = n2.NodeId.ToString("D");
        var deliveries = recorded.Where(m => m.Name == "netserver.backplane.deliveries").ToArray();
        Assert.Equal(2, deliveries.Where(m => Equals(m.Tags["messaging.client.id"], n1Id) && Equals(m.Tags["netserver.backplane.origin"], "local")).Sum(m => m.Value));
        Assert.Equal(2, deliveries.Where(m => Equals(m.Tags["messaging.client.id"], n2Id) && Equals(m.Tags["netserver.backplane.origin"], "remote")).Sum(m => m.Value));
        Assert.DoesNotContain(deliveries, m => Equals(m.Tags["messaging.client.id"], n1Id) && Equals(m.Tags["netserver.backplane.origin"], "remote"));

        var read = Collect(listener, recorded);
        Assert.Equal(1, Of(read, "messaging.client.sent.messages", n1Id).Single(m => !m.Tags.ContainsKey("error.type")).Value);
        Assert.Equal("publish", Of(read, "messaging.client.sent.messages", n1Id).Single().Tags["messaging.operation.name"]);
        Assert.Equal("redis", Of(read, "messaging.client.sent.messages", n1Id).Single().Tags["messaging.system"]);
        Assert.Equal(0, Of(read, "messaging.client.sent.messages", n2Id).Single().Value);
        Assert.Equal(1, Of(read, "messaging.client.consumed.messages", n2Id).Single().Value);
        Assert.Equal(0, Of(read, "messaging.client.consumed.messages", n1Id).Single().Value);
        Assert.Equal(0, Of(read, "netserver.backplane.pending_publishes", n1Id).Single().Value);
        Assert.Equal(0, Of(read, "netserver.backplane.dropped", n1Id).Single().Value);

        // Redis down: the publish fails and is counted with error.type; the local member still gets it.
        await redis.StopAsync();
        Assert.False(await n1.SendToGroupAsync("room", Text("down")).WaitAsync(s_wait));
        await d1.Arrived(a, "down").WaitAsync(s_wait);
        read = Collect(listener, recorded);
        var failed = Of(read, "messaging.client.sent.messages", n1Id).Single(m => m.Tags.ContainsKey("error.type"));
        Assert.Equal("redis_unavailable", failed.Tags["error.type"]);
        Assert.Equal(1, failed.Value);
        Assert.Equal(1, Of(read, "messaging.client.sent.messages", n1Id).Single(m => !m.Tags.ContainsKey("error.type")).Value);

        // A disposed node is no longer observed.
        await n1.DisposeAsync();
        Assert.Empty(Of(Collect(listener, recorded), "messaging.client.sent.messages", n1Id));
    }

    private static (string Name, long Value, Dictionary<string, object?> Tags)[] Of(
        (string Name, long Value, Dictionary<string, object?> Tags)[] read, string name, string node) =>
        read.Where(m => m.Name == name && Equals(m.Tags["messaging.client.id"], node)).ToArray();

    /// <summary>One collection of the observable instruments: what it recorded.</summary>
    private static (string Name, long Value, Dictionary<string, object?> Tags)[] Collect(
        MeterListener listener, ConcurrentQueue<(string Name, long Value, Dictionary<string, object?> Tags)> recorded)
    {
        recorded.Clear();
        listener.RecordObservableInstruments();
        return recorded.Where(m => m.Name != "netserver.backplane.deliveries").ToArray();
    }

    private static Dictionary<string, object?> Copy(ReadOnlySpan<KeyValuePair<string, object?>> tags)
    {
        var copy = new Dictionary<string, object?>();
        foreach (var tag in tags)
            copy[tag.Key] = tag.Value;
        return copy;
    }
}
