using System;
using System.Collections.Concurrent;
using System.Linq;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Streams;

/// <summary>Findings of the review of the engine's seams, each with the behaviour that was broken.</summary>
public sealed class ReviewFindingsTests
{
    private static readonly TimeSpan s_timeout = TimeSpan.FromSeconds(30);

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task A_protocol_hosted_by_a_server_session_gets_OnConnected(TransportKind kind)
    {
        // A session's ready notification joined the multicast but never reached the protocol.
        await using var harness = new ServerHarness(kind);
        var protocols = new ConcurrentBag<FrameProtocol>();
        harness.Probe.ConfigureSession = probe => probe.Connected = session =>
        {
            var protocol = new FrameProtocol();
            protocols.Add(protocol);
            session.Protocol = protocol;
        };
        Assert.True(harness.Start());
        var (peer, _, probe) = await harness.ConnectPeerAsync();
        using (peer)
        {
            var protocol = Assert.Single(protocols);
            await Wait.UntilAsync(() => protocol.Events.Contains("connected"), "the protocol's OnConnected");
            Assert.Equal(["attached", "connected"], protocol.Events);
        }

        await probe.DisconnectedSignal.Task.WaitAsync(s_timeout);
        Assert.StartsWith("disconnected:", Assert.Single(protocols).Events.Last(), StringComparison.Ordinal);
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task An_empty_multipart_send_is_accepted_and_the_connection_goes_on(TransportKind kind)
    {
        // Two empty parts used to reach the socket as an empty gathered send, which threw and left
        // the flusher role taken: every later send waited forever.
        await using var harness = new ServerHarness(kind);
        Assert.True(harness.Start());
        var (peer, session, _) = await harness.ConnectPeerAsync();
        using (peer)
        {
            Assert.True(session.SendAsync(Segments.Of(ReadOnlyMemory<byte>.Empty, ReadOnlyMemory<byte>.Empty)));
            Assert.True(session.SendAsync(new byte[] { 42 }));
            Assert.Equal(new byte[] { 42 }, await Wait.ReadExactlyAsync(peer, 1));
        }
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task A_send_from_another_thread_is_not_held_back_by_a_hook_that_gathers(TransportKind kind)
    {
        // The hook sends (and so gathers), then waits; a send made meanwhile from outside any hook
        // must go out at once, taking the gathered bytes along.
        await using var harness = new ServerHarness(kind);
        using var hookWaits = new ManualResetEventSlim();
        using var release = new ManualResetEventSlim();
        harness.Probe.ConfigureSession = probe => probe.Received = (session, _, _, _) =>
        {
            session.SendAsync(new byte[] { 1 });
            hookWaits.Set();
            release.Wait(s_timeout);
        };
        Assert.True(harness.Start());
        var (peer, session, _) = await harness.ConnectPeerAsync();
        using (peer)
        {
            await peer.SendAsync(new byte[1], SocketFlags.None);
            Assert.True(await HarnessExtensions.RunBlocking(() => hookWaits.Wait(s_timeout)).WaitAsync(s_timeout));
            Assert.True(session.SendAsync(new byte[] { 2 }));
            try
            {
                Assert.Equal(new byte[] { 1, 2 }, await Wait.ReadExactlyAsync(peer, 2, TimeSpan.FromSeconds(10)));
            }
            finally
            {
                release.Set();
            }
        }
    }

    [Fact]
    public async Task A_committed_writer_is_not_handed_out_again_until_it_is_disposed()
    {
        await using var harness = new ServerHarness(TransportKind.Tcp);
        Assert.True(harness.Start());
        var (peer, session, _) = await harness.ConnectPeerAsync();
        using (peer)
        {
            var first = session.StartSend();
            first.Write(new byte[] { 1 });
            Assert.True(first.Commit());

            // A late Dispose of the first (a using that ends after the next StartSend) must not
            // drop the second message: the committed writer is not reused until disposed.
            var second = session.StartSend();
            Assert.NotSame(first, second);
            second.Write(new byte[] { 2 });
            first.Dispose();
            Assert.True(second.Commit());
            second.Dispose();
            Assert.Throws<InvalidOperationException>(() => second.Commit());
            Assert.Equal(new byte[] { 1, 2 }, await Wait.ReadExactlyAsync(peer, 2));

            // Disposed writers are reused: building messages allocates nothing.
            using (var third = session.StartSend())
                Assert.Same(second, third);
        }
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Resuming_does_not_run_OnReceived_on_the_resuming_thread(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        var receivedOn = new ConcurrentQueue<int>();
        harness.Probe.ConfigureSession = probe =>
        {
            probe.Connected = static session => session.PauseReceiving();
            probe.Received = (_, _, _, _) => receivedOn.Enqueue(Environment.CurrentManagedThreadId);
        };
        Assert.True(harness.Start());
        var (peer, session, _) = await harness.ConnectPeerAsync();
        using (peer)
        {
            await peer.SendAsync(new byte[10], SocketFlags.None);
            await Task.Delay(100);
            var resumer = await HarnessExtensions.RunBlocking(() =>
            {
                session.ResumeReceiving();
                return Environment.CurrentManagedThreadId;
            }).WaitAsync(s_timeout);
            await Wait.UntilAsync(() => !receivedOn.IsEmpty, "the delivery after the resume");
            Assert.DoesNotContain(resumer, receivedOn);
        }
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task A_protocol_whose_OnAttached_throws_on_a_live_connection_closes_it_with_HandlerException(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        Assert.True(harness.Start());
        var (peer, session, probe) = await harness.ConnectPeerAsync();
        using (peer)
        {
            session.Protocol = new ThrowingProtocol();
            Assert.Equal(DisconnectReason.HandlerException, await probe.DisconnectedSignal.Task.WaitAsync(s_timeout));
            Assert.IsType<InvalidOperationException>(session.DisconnectException);
        }
    }

    private sealed class ThrowingProtocol : StreamProtocol
    {
        protected internal override int OnReceived(ReadOnlySpan<byte> data) => data.Length;

        protected internal override void OnAttached() => throw new InvalidOperationException("attach failed");
    }
}
