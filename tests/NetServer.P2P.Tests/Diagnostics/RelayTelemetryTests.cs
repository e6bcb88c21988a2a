using System;
using System.Collections.Generic;
using System.Diagnostics.Metrics;
using System.Threading.Tasks;
using NetServer.P2P.Tests.Infrastructure;
using NetServer.Protobuf;
using Xunit;

namespace NetServer.P2P.Tests.Diagnostics;

/// <summary>
/// The "NetServer.P2P" meter: the relay's statistics read by a collector. Measurements are picked
/// by the relay's port (server.port), so other tests' relays running meanwhile do not disturb it.
/// </summary>
public sealed class RelayTelemetryTests
{
    [Fact]
    public async Task A_started_relay_publishes_its_statistics_and_a_stopped_one_nothing()
    {
        await using var harness = new RelayHarness();
        var port = harness.Relay.Port;
        var alice = await harness.ConnectAsync("alice");
        var bob = await harness.ConnectAsync("bob");
        var carol = await harness.ConnectAsync("carol");
        await RelayHarness.AllSeeAsync([alice, bob, carol], 3);

        Assert.True(alice.Send(bob.PeerId, new MessageEnvelope("one")));
        Assert.True(alice.Send(bob.PeerId, new MessageEnvelope("two")));
        Assert.True(alice.Send(Guid.NewGuid(), new MessageEnvelope("to-nobody")));
        await Wait.UntilAsync(() => bob.Received == 2 && !alice.Failures.IsEmpty, () => $"bob to get 2 ({bob.Received}) and alice a refusal");

        var read = Collect(port);
        var statistics = harness.Relay.GetStatistics();
        Assert.Equal(3, Single(read, "netserver.relay.peers").Value);
        Assert.Equal(3, Single(read, "netserver.relay.connections").Value);
        Assert.Equal(3, Single(read, "netserver.relay.registrations").Value);
        Assert.Equal(statistics.MessagesReceived, Single(read, "netserver.relay.messages.received").Value);
        Assert.True(statistics.MessagesReceived >= 3, $"received {statistics.MessagesReceived}");
        Assert.Equal(statistics.MessagesRelayed, Single(read, "netserver.relay.messages.relayed").Value);
        Assert.True(statistics.MessagesRelayed >= 2, $"relayed {statistics.MessagesRelayed}");
        Assert.Equal(statistics.BytesRelayed, Single(read, "netserver.relay.io").Value);
        Assert.True(statistics.BytesRelayed > 0);
        var refusal = Single(read, "netserver.relay.refusals");
        Assert.Equal(1, refusal.Value);
        Assert.Equal("unknown_peer", refusal.Tags["netserver.relay.status"]);
        Assert.All(read, m => Assert.Equal("127.0.0.1", m.Tags["server.address"]));

        await bob.DisposeAsync();
        await Wait.UntilAsync(() => Single(Collect(port), "netserver.relay.peers").Value == 2, () => "the peers gauge to drop to 2");

        Assert.True(harness.Relay.Stop());
        Assert.Empty(Collect(port));
    }

    private static (string Name, long Value, Dictionary<string, object?> Tags) Single(List<(string Name, long Value, Dictionary<string, object?> Tags)> read, string name) =>
        Assert.Single(read, m => m.Name == name);

    /// <summary>One collection of the meter's observable instruments, the measurements of the relay on <paramref name="port"/>.</summary>
    private static List<(string Name, long Value, Dictionary<string, object?> Tags)> Collect(int port)
    {
        var read = new List<(string Name, long Value, Dictionary<string, object?> Tags)>();
        using var listener = new MeterListener
        {
            InstrumentPublished = (instrument, l) =>
            {
                if (instrument.Meter.Name == "NetServer.P2P")
                    l.EnableMeasurementEvents(instrument);
            },
        };
        listener.SetMeasurementEventCallback<long>((instrument, value, tags, _) =>
        {
            var copy = new Dictionary<string, object?>();
            foreach (var tag in tags)
                copy[tag.Key] = tag.Value;
            if (Equals(copy.GetValueOrDefault("server.port"), port))
                read.Add((instrument.Name, value, copy));
        });
        listener.Start();
        listener.RecordObservableInstruments();
        return read;
    }
}
