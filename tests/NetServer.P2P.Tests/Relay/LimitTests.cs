using System;
using System.Linq;
using System.Threading.Tasks;
using NetServer.P2P.Tests.Infrastructure;
using NetServer.Protobuf;
using Xunit;

namespace NetServer.P2P.Tests.Relay;

/// <summary>The relay's limits on what a peer sends, each with its documented outcome.</summary>
public sealed class LimitTests
{
    [Fact]
    public async Task Messages_over_the_peers_rate_are_refused_and_the_sender_told_once_a_second()
    {
        await using var harness = new RelayHarness(new RelayServerOptions { PeerMessageRate = 100 });
        var sender = await harness.ConnectAsync("sender");
        var receiver = await harness.ConnectAsync("receiver");
        receiver.KeepMessages = false;
        for (var i = 0; i < 400; i++)
            sender.Send(receiver.PeerId, new MessageEnvelope("burst"));

        await Wait.UntilAsync(() => harness.Relay.GetStatistics().MessagesReceived >= 400, () => "the relay to take all 400");
        var refused = harness.Relay.GetStatistics().RefusalsOf(RelayStatus.RateLimited);
        await Wait.UntilAsync(() => receiver.Received + refused >= 400, () => $"delivered {receiver.Received} + refused {refused}");
        Assert.InRange(receiver.Received, 100, 200); // a second's worth, and what the bucket refilled meanwhile
        Assert.Equal(400, receiver.Received + refused);
        await Wait.UntilAsync(() => !sender.Failures.IsEmpty, () => "the notice");
        Assert.All(sender.Failures, f => Assert.Equal(RelayStatus.RateLimited, f.Status));
        Assert.InRange(sender.Failures.Count, 1, 2);      // not one notice per refused message
    }

    [Fact]
    public async Task A_request_over_the_rate_fails_at_once_with_RateLimited()
    {
        await using var harness = new RelayHarness(new RelayServerOptions { PeerMessageRate = 5 });
        var asker = await harness.ConnectAsync("asker");
        var silent = await harness.ConnectAsync("silent");
        for (var i = 0; i < 5; i++)
            asker.Send(silent.PeerId, new MessageEnvelope("spend"));
        var refused = await Assert.ThrowsAsync<RelayException>(() => asker.RequestAsync(silent.PeerId, new MessageEnvelope("q"), TimeSpan.FromSeconds(30)));
        Assert.Equal(RelayStatus.RateLimited, refused.Status);
    }

    [Fact]
    public async Task Envelopes_to_unknown_peers_count_against_the_rate_so_their_statuses_cannot_flood()
    {
        await using var harness = new RelayHarness(new RelayServerOptions { PeerMessageRate = 50 });
        var sender = await harness.ConnectAsync("sender");
        var nobody = Guid.NewGuid();
        for (var i = 0; i < 500; i++)
            sender.Send(nobody, new MessageEnvelope("void"));
        await Wait.UntilAsync(() => harness.Relay.GetStatistics().MessagesReceived >= 500, () => "the relay to take all 500");
        var statistics = harness.Relay.GetStatistics();
        Assert.Equal(500, statistics.RefusalsOf(RelayStatus.UnknownPeer) + statistics.RefusalsOf(RelayStatus.RateLimited));
        Assert.InRange(statistics.RefusalsOf(RelayStatus.UnknownPeer), 50, 150); // a second's worth answered one by one
        await Wait.UntilAsync(() => sender.Failures.Any(f => f.Status == RelayStatus.RateLimited), () => "the rate notice");
        Assert.InRange(sender.Failures.Count, 50, 152);                    // not 500 statuses
    }

    [Fact]
    public async Task Bytes_over_the_peers_byte_rate_are_refused()
    {
        await using var harness = new RelayHarness(new RelayServerOptions { PeerByteRate = 20_000 });
        var sender = await harness.ConnectAsync("sender");
        var receiver = await harness.ConnectAsync("receiver");
        var kilobyte = new byte[1000];
        for (var i = 0; i < 60; i++)
            sender.Send(receiver.PeerId, new MessageEnvelope("big") { Payload = kilobyte });
        await Wait.UntilAsync(() => harness.Relay.GetStatistics().MessagesReceived >= 60, () => "the relay to take all 60");
        var refused = harness.Relay.GetStatistics().RefusalsOf(RelayStatus.RateLimited);
        await Wait.UntilAsync(() => receiver.Received + refused >= 60, () => "every message delivered or refused");
        Assert.InRange(receiver.Received, 15, 30); // ~20 KB of ~1.05 KB envelopes, plus the refill meanwhile
    }

    [Fact]
    public async Task A_message_to_everyone_counts_once_per_recipient()
    {
        await using var harness = new RelayHarness(new RelayServerOptions { PeerMessageRate = 10 });
        var peers = await harness.ConnectManyAsync(12);
        await RelayHarness.AllSeeAsync(peers, 12);
        Assert.True(peers[0].Broadcast(new MessageEnvelope("all"))); // 11 copies: more than a second's 10
        await Wait.UntilAsync(() => !peers[0].Failures.IsEmpty, () => "the refusal");
        Assert.Equal(RelayStatus.RateLimited, peers[0].Failures.Single().Status);
        Assert.All(peers.Skip(1), p => Assert.Equal(0, p.Received));
    }

    [Fact]
    public async Task A_full_destination_queue_refuses_with_ResourceLimitExceeded_and_the_peer_stays()
    {
        var options = new RelayServerOptions { MaxMessageSize = 16 * 1024, DestinationQueueLimit = 64 * 1024, ControlQueueReserve = 64 * 1024, PeerByteRate = 0, PeerMessageRate = 0 };
        await using var harness = new RelayHarness(options);
        var sender = await harness.ConnectAsync("sender");
        var slow = await harness.ConnectAsync("slow");
        slow.KeepMessages = false;
        slow.Transport.PauseReceiving(); // reads nothing: the kernel's buffers fill, then the relay's queue

        var payload = new byte[8 * 1024];
        var sent = 0;
        while (sender.Failures.IsEmpty && sent < 20_000)
        {
            sender.Send(slow.PeerId, new MessageEnvelope("fill") { Payload = payload });
            if (++sent % 64 == 0)
                await Task.Delay(1);
        }

        await Wait.UntilAsync(() => !sender.Failures.IsEmpty, () => $"a refusal after {sent} messages");
        Assert.Equal(RelayStatus.ResourceLimitExceeded, sender.Failures.First().Status);
        Assert.True(harness.Relay.TryGetPeerStatistics(slow.PeerId, out var statistics));
        Assert.True(statistics!.BytesPending <= options.DestinationQueueLimit + options.ControlQueueReserve + options.MaxMessageSize);

        // Reading again, the slow peer gets every message the relay accepted, and is still registered.
        await Wait.UntilAsync(() => harness.Relay.GetStatistics().MessagesReceived >= sent, () => "the relay to take every message sent");
        var statisticsAfter = harness.Relay.GetStatistics();
        var accepted = statisticsAfter.MessagesRelayed;
        Assert.Equal(sent, accepted + statisticsAfter.RefusalsOf(RelayStatus.ResourceLimitExceeded));
        slow.Transport.ResumeReceiving();
        await Wait.UntilAsync(() => slow.Received == accepted, () => $"{slow.Received} of {accepted}");
        Assert.True(slow.IsRegistered);
        Assert.Equal(2, harness.Relay.PeerCount);
    }

    [Fact]
    public async Task A_peer_that_lets_even_the_control_reserve_fill_is_disconnected_and_the_others_go_on()
    {
        var options = new RelayServerOptions
        {
            MaxMessageSize = 32 * 1024, DestinationQueueLimit = 64 * 1024, ControlQueueReserve = 64 * 1024,
            MaxNameLength = 30_000, PeerByteRate = 0, PeerMessageRate = 0,
        };
        await using var harness = new RelayHarness(options);
        var sender = await harness.ConnectAsync("sender");
        var slow = await harness.ConnectAsync("slow");
        slow.KeepMessages = false;
        slow.Transport.PauseReceiving();

        // Routed messages fill its queue to the destination limit, and keep it there until the
        // kernel's socket buffers (which grow on loopback) are full too: the relay's queue for it
        // stays at the limit and nothing more leaves for 200 ms.
        var payload = new byte[8 * 1024];
        var slowId = slow.PeerId;
        var sentToSlow = -1L;
        for (var round = 0; round < 2000; round++)
        {
            for (var i = 0; i < 32; i++)
                sender.Send(slowId, new MessageEnvelope("fill") { Payload = payload });
            await Task.Delay(200);
            Assert.True(harness.Relay.TryGetPeerStatistics(slowId, out var figures));
            if (figures!.BytesPending >= options.DestinationQueueLimit - payload.Length - 200 && figures.BytesSent == sentToSlow)
                break;
            sentToSlow = figures.BytesSent;
        }

        Assert.True(harness.Relay.GetStatistics().RefusalsOf(RelayStatus.ResourceLimitExceeded) > 0);

        // ...then deltas (the relay's own messages) overflow the reserve above it: peers with 30 KB names join.
        for (var i = 0; i < 20 && harness.Relay.TryGetPeer(slowId, out _); i++)
            await harness.ConnectAsync(new string((char)('a' + i), 30_000));
        await Wait.UntilAsync(() => !harness.Relay.TryGetPeer(slowId, out _), () => "the relay to drop the peer that does not read");
        await Wait.UntilAsync(() => sender.LeftIds.Contains(slowId), () => "the others to see it leave");
        Assert.True(sender.IsRegistered);
    }

    [Fact]
    public async Task An_envelope_over_the_size_limit_is_refused_by_the_client_and_closes_the_connection_at_the_relay()
    {
        await using var harness = new RelayHarness(new RelayServerOptions { MaxMessageSize = 4096 });
        var sender = await harness.ConnectAsync("sender");
        var other = await harness.ConnectAsync("other");

        var tooLarge = new MessageEnvelope("big") { Payload = new byte[5000] };
        var refused = Assert.Throws<RelayException>(() => sender.Send(other.PeerId, tooLarge));
        Assert.Equal(RelayStatus.MessageTooLarge, refused.Status);
        Assert.True(sender.IsRegistered);

        // The raw frame, past the client's check: the relay's message layer closes that connection.
        Assert.True(sender.ConnectionForTests.SendAsync(tooLarge));
        await Wait.UntilAsync(() => sender.Reason is not null, () => "the relay to close the sender");
        Assert.Contains(sender.Reason, new DisconnectReason?[] { DisconnectReason.PeerClosed, DisconnectReason.ConnectionReset });
        await Wait.UntilAsync(() => harness.Relay.PeerCount == 1, () => "the sender to leave");
        Assert.True(other.IsRegistered);
    }
}
