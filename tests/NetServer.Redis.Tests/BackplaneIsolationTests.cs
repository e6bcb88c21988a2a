using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Diagnostics.Metrics;
using System.Linq;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Redis.Tests;

/// <summary>Trace listeners that throw on every NetServer.Redis message: no other test may run meanwhile.</summary>
[CollectionDefinition(nameof(ThrowingTraceCollection), DisableParallelization = true)]
public sealed class ThrowingTraceCollection;

/// <summary>
/// Code that is not the backplane's and throws (a local delivery, a PublishFailed handler, a trace
/// or meter listener): isolated and counted, and the backplane goes on: its channels are still read
/// and handled, a group's other members still get the message, a failed send still returns false.
/// </summary>
[Collection(nameof(ThrowingTraceCollection))]
public sealed class BackplaneIsolationTests
{
    private static readonly TimeSpan s_wait = TimeSpan.FromSeconds(15);

    private static byte[] Text(string text) => Encoding.UTF8.GetBytes(text);

    private static bool IsRedisTrace(string message) => message.Contains("NetServer.Redis", StringComparison.Ordinal);

    [RedisFact]
    public async Task A_trace_listener_that_throws_does_not_end_the_handling_of_a_channel()
    {
        await using var redis = await RedisProcess.StartAsync();
        var delivery = new ScriptedDelivery(1);
        var session = delivery.Sessions[0];
        await using var sender = new RedisBackplane(new RecordingDelivery());
        await sender.StartAsync(redis.Configuration);
        await using var receiver = new RedisBackplane(delivery);
        await receiver.StartAsync(redis.Configuration);
        using var listener = new TestTraceListener(IsRedisTrace, throws: true);

        // "boom" throws in the delivery, and the trace of that throws in the listener.
        Assert.True(await sender.SendToSessionAsync(session, Text("boom")).WaitAsync(s_wait));
        Assert.True(await sender.SendToSessionAsync(session, Text("after")).WaitAsync(s_wait));
        await delivery.Arrived(session, "after").WaitAsync(s_wait);
        Assert.Equal(2, receiver.CallbackFailures); // the delivery, and the trace of it
        Assert.Single(listener.Messages);
    }

    [RedisFact]
    public async Task A_trace_listener_that_throws_does_not_end_the_pump_of_a_channel()
    {
        await using var redis = await RedisProcess.StartAsync();
        var delivery = new ScriptedDelivery(1);
        var session = delivery.Sessions[0];
        await using var sender = new RedisBackplane(new RecordingDelivery());
        await sender.StartAsync(redis.Configuration);
        await using var receiver = new RedisBackplane(delivery, new BackplaneOptions { MaxReceiveBacklog = 1 });
        await receiver.StartAsync(redis.Configuration);
        using var listener = new TestTraceListener(IsRedisTrace, throws: true);
        try
        {
            // "hold" keeps the one place; "over" is dropped, and the warning of that throws in the listener.
            Assert.True(await sender.SendToSessionAsync(session, Text("hold")).WaitAsync(s_wait));
            await Wait.UntilAsync(() => receiver.ReceiveBacklog == 1, () => "the held frame to wait");
            Assert.True(await sender.SendToSessionAsync(session, Text("over")).WaitAsync(s_wait));
            await Wait.UntilAsync(() => receiver.ReceiveDropped == 1, () => "the second frame to be dropped");
            delivery.Gate.Set();
            await Wait.UntilAsync(() => receiver.ReceiveBacklog == 0, () => "the held frame to be handled"); // else "after" finds the place taken

            Assert.True(await sender.SendToSessionAsync(session, Text("after")).WaitAsync(s_wait));
            await delivery.Arrived(session, "after").WaitAsync(s_wait);
            Assert.Equal(new[] { "hold", "after" }, delivery.Got(session));
            Assert.Equal(1, receiver.CallbackFailures);
        }
        finally
        {
            delivery.Gate.Set();
        }
    }

    [RedisFact]
    public async Task A_PublishFailed_handler_that_throws_leaves_the_send_false_and_the_other_handlers_told()
    {
        await using var redis = await RedisProcess.StartAsync();
        var delivery = new RecordingDelivery();
        var member = delivery.AddSession();
        await using var node = new RedisBackplane(delivery);
        await node.StartAsync(redis.Configuration);
        node.JoinGroup("room", member);
        var told = new ConcurrentQueue<Exception>();
        node.PublishFailed += _ => throw new InvalidOperationException("a PublishFailed handler that throws (test)");
        node.PublishFailed += told.Enqueue;

        await redis.StopAsync();
        Assert.False(await node.SendToGroupAsync("room", Text("down")).WaitAsync(s_wait));
        await delivery.Arrived(member, "down").WaitAsync(s_wait);
        // Each failure (the send's, and maybe a presence renewal's meanwhile) threw once and was told once.
        Assert.NotEmpty(told);
        Assert.All(told, e => Assert.IsType<BackplaneUnavailableException>(e));
        Assert.Equal(told.Count, node.CallbackFailures);
    }

    [RedisFact]
    public async Task A_local_delivery_that_throws_for_a_member_keeps_no_other_member_from_the_message()
    {
        await using var redis = await RedisProcess.StartAsync();
        var delivery = new ScriptedDelivery(3);
        var members = delivery.Sessions;
        await using var sender = new RedisBackplane(new RecordingDelivery());
        await sender.StartAsync(redis.Configuration);
        await using var receiver = new RedisBackplane(delivery);
        await receiver.StartAsync(redis.Configuration);
        foreach (var member in members)
            receiver.JoinGroup("room", member);

        // From another node: every member is handed "boom" (each throws), then "after".
        Assert.True(await sender.SendToGroupAsync("room", Text("boom")).WaitAsync(s_wait));
        Assert.True(await sender.SendToGroupAsync("room", Text("after")).WaitAsync(s_wait));
        await Task.WhenAll(members.Select(m => delivery.Arrived(m, "after"))).WaitAsync(s_wait);
        Assert.All(members, m => Assert.Contains("boom", delivery.Tried(m)));
        Assert.Equal(3, receiver.CallbackFailures);

        // From this node: the same, and the send is published (the send itself does not throw).
        Assert.True(await receiver.SendToGroupAsync("room", Text("boom")).WaitAsync(s_wait));
        Assert.All(members, m => Assert.Equal(2, delivery.Tried(m).Count(t => t == "boom")));
        Assert.Equal(6, receiver.CallbackFailures);
    }

    [Fact]
    public async Task A_meter_listener_that_throws_does_not_fail_a_local_delivery()
    {
        var delivery = new RecordingDelivery();
        var session = delivery.AddSession();
        await using var node = new RedisBackplane(delivery);
        var id = node.NodeId.ToString("D");
        using var listener = new MeterListener
        {
            InstrumentPublished = (instrument, l) =>
            {
                if (instrument.Name == "netserver.backplane.deliveries")
                    l.EnableMeasurementEvents(instrument);
            },
        };
        listener.SetMeasurementEventCallback<long>((_, _, tags, _) =>
        {
            foreach (var tag in tags)
            {
                if (tag.Key == "messaging.client.id" && Equals(tag.Value, id))
                    throw new InvalidOperationException("a meter listener that throws (test)");
            }
        });
        listener.Start();

        // A send to a local session is delivered here and not published: no Redis needed.
        Assert.True(await node.SendToSessionAsync(session, Text("hi")).WaitAsync(s_wait));
        Assert.Equal(new[] { "hi" }, delivery.Got(session));
        Assert.Equal(1, node.CallbackFailures);
    }

    /// <summary>
    /// Local sessions whose delivery throws on "boom" (each call noted first), holds on "hold" until
    /// <see cref="Gate"/> opens, and records the rest.
    /// </summary>
    private sealed class ScriptedDelivery : ILocalDelivery
    {
        private readonly ConcurrentDictionary<Guid, ConcurrentQueue<string>> _tried = new();
        private readonly RecordingDelivery _got = new();

        public ScriptedDelivery(int sessions) => Sessions = Enumerable.Range(0, sessions).Select(_ => _got.AddSession()).ToArray();

        public Guid[] Sessions { get; }

        public ManualResetEventSlim Gate { get; } = new();

        public ConcurrentQueue<string> Tried(Guid session) => _tried.GetOrAdd(session, _ => new());

        public IReadOnlyCollection<string> Got(Guid session) => _got.Got(session);

        public Task Arrived(Guid session, string text) => _got.Arrived(session, text);

        public bool SendToSession(Guid sessionId, ReadOnlySpan<byte> message)
        {
            var text = Encoding.UTF8.GetString(message);
            _tried.GetOrAdd(sessionId, _ => new()).Enqueue(text);
            if (text == "boom")
                throw new InvalidOperationException("a local delivery that throws (test)");
            if (text == "hold" && !Gate.Wait(s_wait))
                throw new TimeoutException("the test did not open the gate");
            return _got.SendToSession(sessionId, message);
        }

        public bool SendToAll(ReadOnlySpan<byte> message) => false;
    }
}
