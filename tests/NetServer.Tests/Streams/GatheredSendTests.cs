using System;
using System.Collections.Concurrent;
using System.Linq;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Streams;

/// <summary>
/// Sends a connection makes during its own hooks go out together when the hook returns (or once
/// 64 KiB are gathered); sends outside any hook, and sends to other connections, go out at once.
/// OnSent is raised once per socket (or stream) write, so it shows how sends were gathered.
/// </summary>
public sealed class GatheredSendTests
{
    private const int MessageSize = 32;
    private static readonly TimeSpan s_timeout = TimeSpan.FromSeconds(30);

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task A_thousand_answers_sent_one_by_one_from_OnReceived_go_out_in_a_few_writes(TransportKind kind)
    {
        const int Messages = 1000;
        await using var harness = new ServerHarness(kind);
        var writes = new ConcurrentQueue<long>();
        harness.Probe.ConfigureSession = probe =>
        {
            probe.Received = static (session, buffer, offset, size) =>
            {
                // As NetCoreServer's benchmark clients and most chat and game servers answer: one send per message.
                for (var i = 0; i < size; i += MessageSize)
                    Assert.True(session.SendAsync(buffer, offset + i, Math.Min(MessageSize, size - i)));
            };
            probe.Sent = (_, sent, _) => writes.Enqueue(sent);
        };
        Assert.True(harness.Start());

        var (peer, _, _) = await harness.ConnectPeerAsync();
        using (peer)
        {
            var request = Framing.Pattern(0, Messages * MessageSize);
            await peer.SendAsync(request, SocketFlags.None);
            Assert.Equal(request, await Wait.ReadExactlyAsync(peer, request.Length));
            await Wait.UntilAsync(() => writes.Sum() == request.Length, "OnSent to account for every byte");

            // Two writes per OnReceived call (the first answer at once, the rest gathered; the
            // request may arrive in a few reads), never one per message.
            Assert.True(writes.Count <= 20, $"{writes.Count} writes for {Messages} answers: sends inside the hook were not gathered ({string.Join(", ", writes.Take(10))}...).");
            Assert.True(writes.Max() >= 10 * MessageSize, $"The largest write carried {writes.Max()} bytes.");
        }
    }

    [Theory]
    [MemberData(nameof(Transports.Plain), MemberType = typeof(Transports))]
    public async Task A_send_made_outside_any_hook_goes_straight_out(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        Assert.True(harness.Start());
        var (peer, session, _) = await harness.ConnectPeerAsync();
        using (peer)
        {
            var message = Framing.Pattern(0, MessageSize);
            Assert.True(session.SendAsync(message));

            // Handed to the kernel before SendAsync returned: nothing waits for a flush.
            Assert.Equal(MessageSize, session.BytesSent);
            Assert.Equal(0, session.BytesPending);
            Assert.Equal(message, await Wait.ReadExactlyAsync(peer, MessageSize));
        }
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task A_long_hook_sends_what_it_gathered_once_64_KiB_are_waiting(TransportKind kind)
    {
        // The hook sends 200 KiB in 1 KiB pieces and then waits, inside the hook, until the peer
        // has received 64 KiB: only the gather limit can get them out before the hook returns.
        await using var harness = new ServerHarness(kind);
        using var peerGotSome = new ManualResetEventSlim();
        var hookSawIt = false;
        harness.Probe.ConfigureSession = probe => probe.Received = (session, _, _, _) =>
        {
            for (var i = 0; i < 200; i++)
                session.SendAsync(Framing.Pattern(i * 1024L, 1024));
            hookSawIt = peerGotSome.Wait(s_timeout);
        };
        Assert.True(harness.Start());

        var (peer, _, _) = await harness.ConnectPeerAsync();
        using (peer)
        {
            await peer.SendAsync(new byte[1], SocketFlags.None);
            var first = await Wait.ReadExactlyAsync(peer, 64 * 1024, s_timeout);
            peerGotSome.Set();
            Assert.Equal(-1, Framing.FindPatternMismatch(first, 0));
            var rest = await Wait.ReadExactlyAsync(peer, (200 - 64) * 1024, s_timeout);
            Assert.Equal(-1, Framing.FindPatternMismatch(rest, 64 * 1024));
            await Wait.UntilAsync(() => hookSawIt, "the hook to return");
        }
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task A_send_to_another_connection_from_a_hook_is_not_held_until_the_hook_returns(TransportKind kind)
    {
        // A hook that sends to another session and waits for that session's peer to get it: were
        // the other session's sends gathered by this hook too, the wait could never end.
        await using var harness = new ServerHarness(kind);
        StreamSession? target = null;
        using var delivered = new ManualResetEventSlim();
        var waitedOut = false;
        harness.Probe.ConfigureSession = probe => probe.Received = (session, _, _, _) =>
        {
            if (ReferenceEquals(session, target))
                return;
            Assert.True(target!.SendAsync(Framing.Pattern(0, 100)));
            waitedOut = !delivered.Wait(s_timeout);
        };
        Assert.True(harness.Start());

        var (sender, _, _) = await harness.ConnectPeerAsync();
        var (receiver, receiverSession, _) = await harness.ConnectPeerAsync();
        using (sender)
        using (receiver)
        {
            target = receiverSession;
            await sender.SendAsync(new byte[1], SocketFlags.None);
            Assert.Equal(Framing.Pattern(0, 100), await Wait.ReadExactlyAsync(receiver, 100, s_timeout));
            delivered.Set();
            Assert.False(waitedOut);
        }
    }
}
