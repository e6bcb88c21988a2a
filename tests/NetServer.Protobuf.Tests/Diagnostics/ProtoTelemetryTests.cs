using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Diagnostics;
using System.Diagnostics.Metrics;
using System.Linq;
using System.Threading.Tasks;
using NetServer.Protobuf.Tests.Infrastructure;
using Xunit;

namespace NetServer.Protobuf.Tests.Diagnostics;

/// <summary>The listeners are process-wide and these instruments carry no endpoint: run alone.</summary>
[CollectionDefinition(nameof(ProtoTelemetryCollection), DisableParallelization = true)]
public sealed class ProtoTelemetryCollection;

/// <summary>The "NetServer.Protobuf" meter and activity source around awaited requests.</summary>
[Collection(nameof(ProtoTelemetryCollection))]
public sealed class ProtoTelemetryTests
{
    [Fact]
    public async Task Requests_are_measured_with_their_outcome_and_traced()
    {
        var measurements = new ConcurrentQueue<(string Name, double Value, Dictionary<string, object?> Tags)>();
        using var meters = new MeterListener
        {
            InstrumentPublished = (instrument, listener) =>
            {
                if (instrument.Meter.Name == "NetServer.Protobuf")
                    listener.EnableMeasurementEvents(instrument);
            },
        };
        meters.SetMeasurementEventCallback<long>((i, v, t, _) => measurements.Enqueue((i.Name, v, Copy(t))));
        meters.SetMeasurementEventCallback<double>((i, v, t, _) => measurements.Enqueue((i.Name, v, Copy(t))));
        meters.Start();
        var stopped = new ConcurrentQueue<Activity>();
        using var activities = new ActivityListener
        {
            ShouldListenTo = source => source.Name == "NetServer.Protobuf",
            Sample = (ref ActivityCreationOptions<ActivityContext> _) => ActivitySamplingResult.AllDataAndRecorded,
            ActivityStopped = stopped.Enqueue,
        };
        ActivitySource.AddActivityListener(activities);

        using var host = ProtoHost.Start(TransportKind.Tcp, (ScriptSession session, in ProtoMessage message) =>
        {
            if (message.HeaderEquals("add"))
                session.Reply(message, new Sample { A = message.Unpack<Sample>().A + 1 });
        });
        using var client = await host.ConnectAsync();
        for (var i = 0; i < 3; i++)
            Assert.Equal(i + 1, (await client.RequestAsync<Sample, Sample>(new MessageEnvelope("add"), new Sample { A = i }, TimeSpan.FromSeconds(10))).A);
        await Assert.ThrowsAsync<TimeoutException>(() =>
            client.RequestAsync<Sample, Sample>(new MessageEnvelope("never"), new Sample(), TimeSpan.FromMilliseconds(100)).WaitAsync(Wait.Default));

        var durations = measurements.Where(m => m.Name == "netserver.proto.request.duration").ToArray();
        Assert.Equal(3, durations.Count(m => Equals(m.Tags["netserver.proto.outcome"], "ok") && !m.Tags.ContainsKey("error.type")));
        var timedOut = Assert.Single(durations, m => Equals(m.Tags["netserver.proto.outcome"], "timeout"));
        Assert.Equal("timeout", timedOut.Tags["error.type"]);
        Assert.True(timedOut.Value >= 0.09, $"a 100-ms timeout measured {timedOut.Value} s");
        Assert.Equal(1, measurements.Where(m => m.Name == "netserver.proto.request.timeouts").Sum(m => m.Value));
        var active = measurements.Where(m => m.Name == "netserver.proto.active_requests").ToArray();
        Assert.Equal(4, active.Count(m => m.Value == 1));
        Assert.Equal(0, active.Sum(m => m.Value));

        var traced = stopped.ToArray();
        Assert.Equal(4, traced.Length);
        Assert.All(traced, a => Assert.Equal(ActivityKind.Client, a.Kind));
        Assert.Equal(3, traced.Count(a => a.Status == ActivityStatusCode.Unset && Equals(a.GetTagItem("netserver.proto.outcome"), "ok")));
        Assert.Single(traced, a => a.Status == ActivityStatusCode.Error && Equals(a.GetTagItem("error.type"), "timeout"));
    }

    private static Dictionary<string, object?> Copy(ReadOnlySpan<KeyValuePair<string, object?>> tags)
    {
        var copy = new Dictionary<string, object?>();
        foreach (var tag in tags)
            copy[tag.Key] = tag.Value;
        return copy;
    }
}
