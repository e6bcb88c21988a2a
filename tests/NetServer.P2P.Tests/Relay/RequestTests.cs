using System;
using System.Collections.Concurrent;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using NetServer.P2P.Tests.Infrastructure;
using NetServer.Protobuf;
using Xunit;

namespace NetServer.P2P.Tests.Relay;

/// <summary>Awaited requests between peers through the relay: matched under load, timeouts, cancellation, refusals, departures.</summary>
public sealed class RequestTests
{
    private static readonly TimeSpan s_long = TimeSpan.FromSeconds(30);

    /// <summary>Answers "double" at once; keeps "hold" requests for the test; ignores "never".</summary>
    private static void Answer(TestPeer peer, in ProtoMessage message)
    {
        if (message.IsRequest && message.HeaderEquals("double"))
        {
            var request = message.Unpack<Sample>();
            peer.Reply(in message, new Sample { A = request.A * 2, Text = request.Text });
        }
    }

    [Fact]
    public async Task Requests_between_many_peers_under_load_each_get_their_own_reply()
    {
        const int Pairs = 8;
        const int Requests = 250;
        await using var harness = new RelayHarness(new RelayServerOptions { MaxPeersPerAddress = 0 });
        var peers = await harness.ConnectManyAsync(2 * Pairs);
        foreach (var peer in peers)
            peer.Handler = Answer;

        // Every peer asks its partner Requests times at once, both ways.
        var work = peers.Select(async (peer, i) =>
        {
            var partner = peers[i < Pairs ? i + Pairs : i - Pairs].PeerId;
            var tasks = Enumerable.Range(0, Requests).Select(n =>
                peer.RequestAsync<Sample, Sample>(partner, new MessageEnvelope("double"), new Sample { A = i * 10_000 + n, Text = $"{i}/{n}" }, s_long)).ToArray();
            var replies = await Task.WhenAll(tasks);
            for (var n = 0; n < Requests; n++)
            {
                Assert.Equal(2 * (i * 10_000 + n), replies[n].A);
                Assert.Equal($"{i}/{n}", replies[n].Text);
            }
        });
        await Task.WhenAll(work).WaitAsync(TimeSpan.FromSeconds(60));

        var statistics = harness.Relay.GetStatistics();
        Assert.Equal(2L * 2 * Pairs * Requests, statistics.MessagesRelayed);
        Assert.Equal(0, statistics.Refusals);
        Assert.All(peers, p => Assert.Equal(Requests, p.GetStatistics(peers[Array.IndexOf(peers, p) < Pairs ? Array.IndexOf(peers, p) + Pairs : Array.IndexOf(peers, p) - Pairs].PeerId)!.RequestsSent));
    }

    [Fact]
    public async Task A_request_to_an_unknown_peer_fails_at_once_with_the_relays_status()
    {
        await using var harness = new RelayHarness();
        var peer = await harness.ConnectAsync();
        var clock = Stopwatch.StartNew();
        var refused = await Assert.ThrowsAsync<RelayException>(() => peer.RequestAsync(Guid.NewGuid(), new MessageEnvelope("q"), s_long));
        Assert.Equal(RelayStatus.UnknownPeer, refused.Status);
        Assert.True(clock.Elapsed < TimeSpan.FromSeconds(5), $"it took {clock.Elapsed}");
    }

    [Fact]
    public async Task A_request_times_out_and_is_canceled_on_the_callers_word()
    {
        await using var harness = new RelayHarness();
        var asker = await harness.ConnectAsync("asker");
        var silent = await harness.ConnectAsync("silent");

        var clock = Stopwatch.StartNew();
        await Assert.ThrowsAsync<TimeoutException>(() => asker.RequestAsync(silent.PeerId, new MessageEnvelope("never"), TimeSpan.FromMilliseconds(200)));
        Assert.True(clock.Elapsed >= TimeSpan.FromMilliseconds(200));

        using var cancel = new CancellationTokenSource();
        var waiting = asker.RequestAsync(silent.PeerId, new MessageEnvelope("never"), s_long, cancel.Token);
        await Wait.UntilAsync(() => silent.Received == 2, () => "the request to arrive");
        cancel.Cancel();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => waiting);
        Assert.Equal(2, asker.GetStatistics(silent.PeerId)!.RequestsFailed);
    }

    [Fact]
    public async Task A_request_fails_with_PeerLeft_when_the_peer_leaves_while_it_waits()
    {
        await using var harness = new RelayHarness();
        var asker = await harness.ConnectAsync("asker");
        var leaving = await harness.ConnectAsync("leaving");
        var waiting = asker.RequestAsync(leaving.PeerId, new MessageEnvelope("never"), s_long);
        await Wait.UntilAsync(() => leaving.Received == 1, () => "the request to arrive");

        var clock = Stopwatch.StartNew();
        await leaving.DisconnectAsync();
        var left = await Assert.ThrowsAsync<RelayException>(() => waiting.WaitAsync(Wait.Default));
        Assert.Equal(RelayStatus.PeerLeft, left.Status);
        Assert.True(clock.Elapsed < TimeSpan.FromSeconds(5), $"it took {clock.Elapsed}");
    }

    [Fact]
    public async Task A_request_fails_with_an_IOException_when_the_connection_to_the_relay_drops()
    {
        await using var harness = new RelayHarness();
        var asker = await harness.ConnectAsync("asker");
        var silent = await harness.ConnectAsync("silent");
        var waiting = asker.RequestAsync(silent.PeerId, new MessageEnvelope("never"), s_long);
        await Wait.UntilAsync(() => silent.Received == 1, () => "the request to arrive");
        Assert.True(harness.Relay.DisconnectPeer(asker.PeerId));
        await Assert.ThrowsAsync<IOException>(() => waiting.WaitAsync(Wait.Default));
        await Wait.UntilAsync(() => !asker.IsRegistered, () => "the client to see the end");
    }

    [Fact]
    public async Task A_forged_reply_from_another_peer_is_refused_and_the_real_one_still_answers()
    {
        await using var harness = new RelayHarness();
        var asker = await harness.ConnectAsync("asker");
        var asked = await harness.ConnectAsync("asked");
        var forger = await harness.ConnectAsync("forger");
        var held = new ConcurrentQueue<MessageEnvelope>();
        asked.Handler = (TestPeer _, in ProtoMessage m) => held.Enqueue(m.ToEnvelope());

        var waiting = asker.RequestAsync<Sample, Sample>(asked.PeerId, new MessageEnvelope("hold"), new Sample { A = 1 }, s_long);
        await Wait.UntilAsync(() => held.Count == 1, () => "the request to arrive");
        var request = held.Single();

        // The forger guesses the correlation id (ids are 1, 2, 3... per connection) and answers first.
        var forged = new MessageEnvelope("hold") { RequestId = request.RequestId, Flags = ProtoFlags.Response }.Pack(new Sample { A = 666 });
        Assert.True(forger.Send(asker.PeerId, forged));
        await Wait.UntilAsync(() => !forger.Failures.IsEmpty, () => "the forged reply to be refused");
        Assert.Equal(RelayStatus.UnexpectedReply, forger.Failures.Single().Status);
        Assert.False(waiting.IsCompleted);

        Assert.True(asked.Reply(request, new Sample { A = 2 }));
        Assert.Equal(2, (await waiting.WaitAsync(Wait.Default)).A);
        Assert.Equal(0, asker.Received); // the forgery never reached the asker in any form
    }

    [Fact]
    public async Task A_reply_sent_to_everyone_or_to_a_room_is_refused_and_cannot_end_a_request_in_flight()
    {
        await using var harness = new RelayHarness();
        var asker = await harness.ConnectAsync("asker");
        var asked = await harness.ConnectAsync("asked");
        var forger = await harness.ConnectAsync("forger");
        var held = new ConcurrentQueue<MessageEnvelope>();
        asked.Handler = (TestPeer _, in ProtoMessage m) => held.Enqueue(m.ToEnvelope());
        var room = await forger.JoinRoomAsync("lobby");
        await asker.JoinRoomAsync("lobby");

        var waiting = asker.RequestAsync<Sample, Sample>(asked.PeerId, new MessageEnvelope("hold"), new Sample { A = 1 }, s_long);
        await Wait.UntilAsync(() => held.Count == 1, () => "the request to arrive");
        var request = held.Single();

        // The guessed correlation id, as a reply to everyone and to a room the asker is in: the
        // reply check is for one addressee, so a fan-out must not carry replies past it.
        var forged = new MessageEnvelope("hold") { RequestId = request.RequestId, Flags = ProtoFlags.Response }.Pack(new Sample { A = 666 });
        Assert.True(forger.Broadcast(forged));
        Assert.True(forger.SendToRoom(room, forged));
        await Wait.UntilAsync(() => forger.Failures.Count == 2, () => $"both forged replies to be refused ({forger.Failures.Count})");
        Assert.All(forger.Failures, f => Assert.Equal(RelayStatus.Forbidden, f.Status));
        Assert.False(waiting.IsCompleted);

        Assert.True(asked.Reply(request, new Sample { A = 2 }));
        Assert.Equal(2, (await waiting.WaitAsync(Wait.Default)).A);
        Assert.Equal(0, asker.Received);
    }

    [Fact]
    public async Task Requests_in_flight_per_peer_are_limited()
    {
        await using var harness = new RelayHarness(new RelayServerOptions { MaxRequestsInFlight = 4 });
        var asker = await harness.ConnectAsync("asker");
        var silent = await harness.ConnectAsync("silent");
        var waiting = Enumerable.Range(0, 4).Select(_ => asker.RequestAsync(silent.PeerId, new MessageEnvelope("never"), s_long)).ToArray();
        await Wait.UntilAsync(() => silent.Received == 4, () => "four requests to arrive");

        var refused = await Assert.ThrowsAsync<RelayException>(() => asker.RequestAsync(silent.PeerId, new MessageEnvelope("never"), s_long));
        Assert.Equal(RelayStatus.ResourceLimitExceeded, refused.Status);
        Assert.All(waiting, t => Assert.False(t.IsCompleted));
    }

    [Fact]
    public async Task Ping_measures_the_round_trip_to_a_peer_and_to_the_relay()
    {
        await using var harness = new RelayHarness();
        var a = await harness.ConnectAsync("a");
        var b = await harness.ConnectAsync("b");
        await RelayHarness.AllSeeAsync([a, b], 2);
        var rtt = await a.PingAsync(b.PeerId, s_long);
        Assert.True(rtt > TimeSpan.Zero);
        var statistics = a.GetStatistics(b.PeerId)!;
        Assert.Equal(rtt, statistics.LastRoundTrip);
        Assert.Equal(rtt, statistics.SmoothedRoundTrip);
        await a.PingAsync(b.PeerId, s_long);
        Assert.NotNull(a.GetStatistics(b.PeerId)!.SmoothedRoundTrip);
        Assert.Equal(0, b.Received); // the ping was answered by the client library, not the application

        var relay = await a.PingRelayAsync(s_long);
        Assert.Equal(relay, a.RelayRoundTrip);
    }
}
