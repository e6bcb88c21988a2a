using System;
using System.Collections.Generic;
using System.Linq;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Streams;

/// <summary>
/// Pause and resume of receiving, by the application and by the send backlog (nothing lost to a
/// slow reader): TCP flow control slows the peer down, nothing piles up in memory.
/// </summary>
public sealed class ReceivePauseTests
{
    private static readonly TimeSpan s_timeout = TimeSpan.FromSeconds(60);

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Pausing_stops_delivery_and_resuming_delivers_the_kept_bytes_first(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        FrameProtocol? protocol = null;
        harness.Probe.ConfigureSession = probe => probe.Connected = session => session.Protocol = protocol = new FrameProtocol
        {
            Frame = static (p, frame) =>
            {
                if (p.Frames == 1)
                    p.Connection!.PauseReceiving();
            },
        };
        Assert.True(harness.Start());

        var (peer, session, _) = await harness.ConnectPeerAsync();
        using (peer)
        {
            // Ten frames in one write: the pause after the first leaves nine retained in the buffer.
            await peer.SendAsync(Frames(0, 10), SocketFlags.None);
            await Wait.UntilAsync(() => session.IsReceivingPaused && protocol!.Frames == 1, "the pause after the first frame");

            // More bytes while paused are not read (not even retained): the peer just waits.
            await peer.SendAsync(Frames(10, 10), SocketFlags.None);
            await Task.Delay(300);
            Assert.Equal(1, protocol!.Frames);
            Assert.True(session.IsReceivingPaused);

            session.ResumeReceiving();
            await Wait.UntilAsync(() => protocol.Frames == 20, () => $"all 20 frames after the resume (has {protocol.Frames})");
            Assert.False(session.IsReceivingPaused);
            Assert.Null(protocol.Error);
        }
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task A_paused_session_slows_its_peer_down_through_TCP_and_buffers_nothing(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        harness.Pool.CaptureStacks = false;
        long received = 0;
        harness.Probe.ConfigureSession = probe =>
        {
            probe.Connected = static session => session.PauseReceiving();
            probe.Received = (_, _, _, size) => Interlocked.Add(ref received, size);
        };
        Assert.True(harness.Start());

        var (peer, session, _) = await harness.ConnectPeerAsync();
        using (peer)
        {
            // The peer writes until its writes stall: only the kernels' buffers (and the TLS
            // relay's, for TLS) take anything, the session holds none of it.
            var chunk = new byte[16 * 1024];
            long written = 0;
            var writing = Task.Run(async () =>
            {
                while (written < 512L * 1024 * 1024)
                {
                    await peer.SendAsync(chunk, SocketFlags.None);
                    Interlocked.Add(ref written, chunk.Length);
                }
            });
            var stalled = await HarnessExtensions.WaitUntilStableAsync(() => Interlocked.Read(ref written), "the peer's writes to stall", TimeSpan.FromMilliseconds(500));
            Assert.True(stalled < 64L * 1024 * 1024, $"The peer wrote {stalled} bytes into a paused session.");
            Assert.Equal(0, Interlocked.Read(ref received));
            Assert.True(harness.Pool.OutstandingBytes < 1024 * 1024, $"A paused session holds {harness.Pool.OutstandingBytes} bytes of buffers.");

            session.ResumeReceiving();
            await Wait.UntilAsync(() => Interlocked.Read(ref received) >= stalled + chunk.Length, "the resumed session to read on");
            peer.Close();
            await writing.ContinueWith(static _ => { }, TaskScheduler.Default);
        }
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Four_peers_that_send_256_MiB_before_reading_get_every_byte_back_in_bounded_memory(TransportKind kind)
    {
        // An echo session as a new user writes it: OnReceived → SendAsync. The peers write without
        // reading until their writes stall, and only then read. With receiving paused at the send
        // high-water mark, every byte comes back; without it, SendAsync refuses what passes the
        // send limit and most of the echo is lost.
        const long size = 256L * 1024 * 1024;
        const int Peers = 4;
        await using var harness = new ServerHarness(kind);
        harness.Pool.CaptureStacks = false;
        var refused = 0;
        harness.Probe.ConfigureSession = probe => probe.Received = (session, buffer, offset, count) =>
        {
            if (!session.SendAsync(buffer, offset, count))
                Interlocked.Increment(ref refused);
        };
        Assert.True(harness.Start());

        var peers = new List<Socket>();
        for (var i = 0; i < Peers; i++)
            peers.Add((await harness.ConnectPeerAsync()).Peer);
        var (other, _, _) = await harness.ConnectPeerAsync();
        try
        {
            var written = new long[Peers];
            var writes = peers.Select((peer, i) => Task.Run(() => WritePatternAsync(peer, size, v => Volatile.Write(ref written[i], v)))).ToArray();
            await HarnessExtensions.WaitUntilStableAsync(() => written.Sum(), "the peers' writes to stall", TimeSpan.FromMilliseconds(500));
            Assert.True(written.Sum() < Peers * size, "The peers wrote everything before reading: nothing pushed back.");

            // Another client is served while the four are stalled.
            for (var i = 0; i < 20; i++)
            {
                var ping = Framing.Pattern(i, 100);
                await other.SendAsync(ping, SocketFlags.None);
                Assert.Equal(ping, await Wait.ReadExactlyAsync(other, ping.Length));
            }

            var reads = peers.Select(peer => Task.Run(() => ReadPatternAsync(peer, size))).ToArray();
            await Task.WhenAll(writes).WaitAsync(s_timeout);
            var mismatches = await Task.WhenAll(reads).WaitAsync(s_timeout);
            Assert.All(mismatches, m => Assert.Equal(-1, m));
            Assert.Equal(0, refused);

            // Each session's queue stopped near the high-water mark (1 MiB) plus one read (64 KiB);
            // without the pause, the 4 MiB send limit would have been hit and the rest refused.
            var peak = harness.Pool.PeakOutstandingBytes;
            Assert.True(peak < Peers * 8L * 1024 * 1024, $"The server held {peak} bytes at once.");
        }
        finally
        {
            foreach (var peer in peers)
                peer.Dispose();
            other.Dispose();
        }
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task A_client_streaming_from_outside_its_hooks_keeps_reading_while_its_backlog_is_high(TransportKind kind)
    {
        // The client's backlog is its own upload, not answers to what it receives: were it to stop
        // reading for it, the echoing server would stop too, and neither would ever drain (over
        // Unix sockets, whose kernel buffers are small, this hung at once).
        const long Size = 64L * 1024 * 1024;
        await using var harness = new ServerHarness(kind);
        harness.Pool.CaptureStacks = false;
        harness.Probe.ConfigureSession = probe => probe.Received = static (session, buffer, offset, count) =>
            Assert.True(session.SendAsync(buffer, offset, count));
        Assert.True(harness.Start());

        var probe = new Probe();
        long mismatch = -1;
        probe.Received = (_, buffer, offset, size) =>
        {
            var at = Framing.FindPatternMismatch(buffer.AsSpan((int)offset, (int)size), probe.ReceivedBytes - size);
            if (at >= 0 && mismatch < 0)
                mismatch = probe.ReceivedBytes - size + at;
        };
        using var client = harness.CreateClient(probe);
        Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout));
        var chunk = new byte[256 * 1024];
        for (long position = 0; position < Size; position += chunk.Length)
        {
            Framing.FillPattern(chunk, position);
            var send = client.SendAsync(chunk.AsMemory(), CancellationToken.None).AsTask();
            if (await Task.WhenAny(send, Task.Delay(s_timeout)) != send)
            {
                var session = harness.Probe.Sessions.Keys.Select(harness.FindSession).Single()!;
                Assert.Fail($"The upload stalled at {position}: client pending {client.BytesPending} paused {client.IsReceivingPaused} received {probe.ReceivedBytes}; session pending {session.BytesPending} paused {session.IsReceivingPaused} received {session.BytesReceived} sent {session.BytesSent}");
            }
        }

        await Wait.UntilAsync(() => probe.ReceivedBytes == Size, () => $"every byte back (has {probe.ReceivedBytes})", s_timeout);
        Assert.Equal(-1, mismatch);
    }

    private static async Task WritePatternAsync(Socket peer, long size, Action<long> progress)
    {
        var chunk = new byte[1024 * 1024];
        for (long position = 0; position < size; position += chunk.Length)
        {
            Framing.FillPattern(chunk, position);
            await peer.SendAsync(chunk, SocketFlags.None);
            progress(position + chunk.Length);
        }
    }

    /// <summary>Reads <paramref name="size"/> bytes and returns the position of the first byte off the pattern, or -1.</summary>
    private static async Task<long> ReadPatternAsync(Socket peer, long size)
    {
        var buffer = new byte[256 * 1024];
        long position = 0;
        using var cts = new CancellationTokenSource(s_timeout);
        while (position < size)
        {
            var read = await peer.ReceiveAsync(buffer, SocketFlags.None, cts.Token);
            if (read == 0)
                return position;
            var mismatch = Framing.FindPatternMismatch(buffer.AsSpan(0, read), position);
            if (mismatch >= 0)
                return position + mismatch;
            position += read;
        }

        return -1;
    }

    private static byte[] Frames(int first, int count)
    {
        var frames = new List<byte>();
        for (var i = first; i < first + count; i++)
            frames.AddRange(Framing.Frame(1, i, 50));
        return [.. frames];
    }
}
