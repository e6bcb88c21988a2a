using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Protobuf.Tests.Infrastructure;
using Xunit;

namespace NetServer.Protobuf.Tests.Sessions;

/// <summary>Awaited requests over TCP, Unix sockets and TLS: out of order, timeouts, cancellation, disconnects.</summary>
public sealed class RequestResponseTests
{
    // The server's routes: "add" answers at once, "batch" in reverse order per 50, "late" after 300 ms, "never" not at all.
    private static ProtoHost Start(TransportKind kind, Action<ScriptSession, DisconnectReason>? disconnected = null, Action<ScriptSession>? onRequest = null)
    {
        var batches = new Dictionary<ScriptSession, List<MessageEnvelope>>();
        var random = new Random(3);
        return ProtoHost.Start(
            kind,
            (ScriptSession session, in ProtoMessage message) =>
            {
                onRequest?.Invoke(session);
                if (message.HeaderEquals("add"))
                {
                    session.Reply(message, new Sample { A = message.Unpack<Sample>().A + 1 });
                }
                else if (message.HeaderEquals("garbage"))
                {
                    session.ReplyBytes(message, [0xFF, 0xFF]);
                }
                else if (message.HeaderEquals("late"))
                {
                    var request = message.ToEnvelope();
                    _ = Task.Delay(300).ContinueWith(_ => session.Reply(request, new Sample { A = -1 }), TaskScheduler.Default);
                }
                else if (message.HeaderEquals("batch"))
                {
                    List<MessageEnvelope> batch;
                    lock (batches)
                    {
                        if (!batches.TryGetValue(session, out batch!))
                            batches[session] = batch = [];
                        batch.Add(message.ToEnvelope());
                        if (batch.Count < 50)
                            return;
                        batches[session] = [];
                    }

                    var delay = random.Next(1, 20);
                    _ = Task.Run(async () =>
                    {
                        await Task.Delay(delay);
                        for (var i = batch.Count - 1; i >= 0; i--)
                            session.Reply(batch[i], new Sample { A = batch[i].Unpack<Sample>().A * 2, Text = batch[i].Id.ToString() });
                    });
                }
            },
            disconnected);
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Replies_in_reverse_order_and_with_delays_reach_their_own_requests(TransportKind kind)
    {
        using var host = Start(kind);
        var clients = await Task.WhenAll(Enumerable.Range(0, 4).Select(_ => host.ConnectAsync()));
        try
        {
            var work = clients.Select(async (client, c) =>
            {
                var requests = Enumerable.Range(0, 500).Select(i =>
                {
                    var envelope = new MessageEnvelope("batch");
                    return (envelope, task: client.RequestAsync<Sample, Sample>(envelope, new Sample { A = c * 10_000 + i }, TimeSpan.FromSeconds(30)));
                }).ToArray();
                for (var i = 0; i < requests.Length; i++)
                {
                    var reply = await requests[i].task.WaitAsync(Wait.Default);
                    Assert.Equal((c * 10_000 + i) * 2, reply.A);
                    Assert.Equal(requests[i].envelope.Id.ToString(), reply.Text);
                }

                Assert.Equal(0, client.PendingRequests);
                Assert.Equal(0, client.LateReplies);
            });
            await Task.WhenAll(work);
        }
        finally
        {
            foreach (var client in clients)
                client.Dispose();
        }
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task A_timeout_throws_leaves_nothing_pending_and_a_late_reply_is_dropped(TransportKind kind)
    {
        using var host = Start(kind);
        using var client = await host.ConnectAsync();

        for (var i = 0; i < 3; i++)
        {
            var clock = Stopwatch.StartNew();
            var error = await Assert.ThrowsAsync<TimeoutException>(() =>
                client.RequestAsync<Sample, Sample>(new MessageEnvelope("late"), new Sample(), TimeSpan.FromMilliseconds(100)).WaitAsync(Wait.Default));
            Assert.True(clock.ElapsedMilliseconds >= 95, $"timed out after {clock.ElapsedMilliseconds} ms");
            Assert.Contains("within 100 ms", error.Message, StringComparison.Ordinal);
            Assert.Equal(0, client.PendingRequests);

            // The request's timer entry is back in the table's free list, disarmed, and reused by the next request.
            Assert.Equal(1, client.Requests.FreeCount);
            Assert.Equal(0, client.Requests.ArmedFreeCount);
        }

        // The three replies come 300 ms after their requests: counted as late, dropped, and the connection goes on.
        await Wait.UntilAsync(() => client.LateReplies == 3, () => $"3 late replies, saw {client.LateReplies}");
        Assert.True(client.IsConnected);
        Assert.Equal(6, (await client.RequestAsync<Sample, Sample>(new MessageEnvelope("add"), new Sample { A = 5 }, TimeSpan.FromSeconds(10))).A);
        Assert.Equal(0, client.PendingRequests);
        Assert.Equal(1, client.Requests.FreeCount);
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task A_canceled_request_throws_and_leaves_nothing_pending(TransportKind kind)
    {
        var received = 0;
        using var host = Start(kind, onRequest: _ => Interlocked.Increment(ref received));
        using var client = await host.ConnectAsync();

        using (var cts = new CancellationTokenSource(TimeSpan.FromMilliseconds(50)))
        {
            var request = client.RequestAsync<Sample, Sample>(new MessageEnvelope("never"), new Sample(), TimeSpan.FromSeconds(30), cts.Token);
            await Assert.ThrowsAnyAsync<OperationCanceledException>(() => request.WaitAsync(Wait.Default));
            Assert.True(request.IsCanceled);
        }

        Assert.Equal(0, client.PendingRequests);
        Assert.Equal(1, client.Requests.FreeCount);
        Assert.Equal(0, client.Requests.ArmedFreeCount);

        // Canceled before it starts: nothing is sent.
        var before = Volatile.Read(ref received);
        var canceled = client.RequestAsync(new MessageEnvelope("add"), TimeSpan.FromSeconds(1), new CancellationToken(canceled: true));
        Assert.True(canceled.IsCanceled);
        Assert.Equal(6, (await client.RequestAsync<Sample, Sample>(new MessageEnvelope("add"), new Sample { A = 5 }, TimeSpan.FromSeconds(10))).A);
        Assert.Equal(before + 1, Volatile.Read(ref received));
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task When_the_connection_drops_every_pending_request_fails_at_once(TransportKind kind)
    {
        var received = 0;
        using var host = Start(kind, onRequest: session =>
        {
            if (Interlocked.Increment(ref received) == 200)
                session.Disconnect();
        });
        using var client = await host.ConnectAsync();

        var requests = Enumerable.Range(0, 200)
            .Select(_ => client.RequestAsync(new MessageEnvelope("never"), Timeout.InfiniteTimeSpan))
            .ToArray();
        foreach (var request in requests)
        {
            var error = await Assert.ThrowsAsync<IOException>(() => request.WaitAsync(Wait.Default));
            Assert.Contains("The connection closed (", error.Message, StringComparison.Ordinal);
            Assert.Contains("before the reply to request", error.Message, StringComparison.Ordinal);
        }

        Assert.Contains(client.DisconnectReason.ToString(), (await Assert.ThrowsAsync<IOException>(() => requests[0])).Message, StringComparison.Ordinal);
        Assert.Equal(0, client.PendingRequests);
        Assert.Equal(0, client.Requests.ArmedFreeCount);

        // Not connected: a request fails at once.
        var refused = await Assert.ThrowsAsync<IOException>(() =>
            client.RequestAsync(new MessageEnvelope("add"), TimeSpan.FromSeconds(5)).WaitAsync(Wait.Default));
        Assert.Contains("not connected", refused.Message, StringComparison.Ordinal);
        Assert.Equal(0, client.PendingRequests);
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task The_server_asks_the_client_and_a_client_going_away_fails_the_session_requests(TransportKind kind)
    {
        var sessionReady = new TaskCompletionSource<ScriptSession>(TaskCreationOptions.RunContinuationsAsynchronously);
        using var host = Start(kind, onRequest: session => sessionReady.TrySetResult(session));
        using var client = host.CreateClient(e => new AnsweringClient(e), (c, e) => new AnsweringClient(c, e));
        Assert.True(await client.ConnectAsync().WaitAsync(Wait.Default));
        await client.RequestAsync(new MessageEnvelope("hello"), TimeSpan.FromMilliseconds(50)).ContinueWith(_ => { }, TaskScheduler.Default);
        var session = await sessionReady.Task.WaitAsync(Wait.Default);

        var answers = await Task.WhenAll(Enumerable.Range(0, 100).Select(i =>
            session.RequestAsync<Sample, Sample>(new MessageEnvelope("square"), new Sample { A = i }, TimeSpan.FromSeconds(10))));
        Assert.Equal(Enumerable.Range(0, 100).Select(i => i * i), answers.Select(a => a.A));
        Assert.Equal(0, session.PendingRequests);

        // A request the client will not answer, then the client goes away.
        var pending = session.RequestAsync(new MessageEnvelope("ignore"), Timeout.InfiniteTimeSpan);
        await Wait.UntilAsync(() => client.Ignored == 1, () => "the client got the request");
        client.Dispose();
        var error = await Assert.ThrowsAsync<IOException>(() => pending.WaitAsync(Wait.Default));
        Assert.Contains("The connection closed (", error.Message, StringComparison.Ordinal);
        Assert.Equal(0, session.PendingRequests);
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task A_reply_that_is_not_the_expected_type_fails_that_request_only(TransportKind kind)
    {
        using var host = Start(kind);
        using var client = await host.ConnectAsync();
        var error = await Assert.ThrowsAsync<InvalidDataException>(() =>
            client.RequestAsync<Sample, Sample>(new MessageEnvelope("garbage"), new Sample(), TimeSpan.FromSeconds(10)).WaitAsync(Wait.Default));
        Assert.Contains("could not be read as Sample", error.Message, StringComparison.Ordinal);
        Assert.Equal(3, (await client.RequestAsync<Sample, Sample>(new MessageEnvelope("add"), new Sample { A = 2 }, TimeSpan.FromSeconds(10))).A);
    }

    /// <summary>A client that answers the server's "square" requests and counts the others.</summary>
    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Pending_requests_fail_at_once_even_when_OnDisconnected_is_overridden_without_the_base(TransportKind kind)
    {
        var received = 0;
        using var host = Start(kind, onRequest: session =>
        {
            if (Interlocked.Increment(ref received) == 20)
                session.Disconnect();
        });
        using var client = host.CreateClient(e => new ForgetfulClient(e), (c, e) => new ForgetfulClient(c, e));
        Assert.True(await client.ConnectAsync().WaitAsync(Wait.Default));

        var requests = Enumerable.Range(0, 20).Select(_ => client.RequestAsync(new MessageEnvelope("never"), Timeout.InfiniteTimeSpan)).ToArray();
        foreach (var request in requests)
            await Assert.ThrowsAsync<IOException>(() => request.WaitAsync(Wait.Default));
        Assert.Equal(1, ((ForgetfulClient)client).Disconnects);
        Assert.Equal(0, client.PendingRequests);
    }

    /// <summary>A client whose OnDisconnected override does not call the base.</summary>
    private sealed class ForgetfulClient : ProtoClient
    {
        private int _disconnects;

        public ForgetfulClient(System.Net.EndPoint endpoint)
            : base(endpoint)
        {
        }

        public ForgetfulClient(SslContext context, System.Net.EndPoint endpoint)
            : base(context, endpoint)
        {
        }

        public int Disconnects => Volatile.Read(ref _disconnects);

        protected override void OnDisconnected(DisconnectReason reason) => Interlocked.Increment(ref _disconnects);
    }

    private sealed class AnsweringClient : ProtoClient
    {
        private int _ignored;

        public AnsweringClient(System.Net.EndPoint endpoint)
            : base(endpoint)
        {
        }

        public AnsweringClient(SslContext context, System.Net.EndPoint endpoint)
            : base(context, endpoint)
        {
        }

        public int Ignored => Volatile.Read(ref _ignored);

        protected override void OnMessage(in ProtoMessage message)
        {
            if (message.IsRequest && message.HeaderEquals("square"))
            {
                var value = message.Unpack<Sample>().A;
                Reply(message, new Sample { A = value * value });
            }
            else
            {
                Interlocked.Increment(ref _ignored);
            }
        }
    }
}
