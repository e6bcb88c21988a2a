using System;
using System.Collections.Generic;
using System.Linq;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Tcp;

/// <summary>
/// One connection's OnReceived never overlaps itself and sees the bytes in order; sends from many
/// threads, through every send overload, never interleave and keep each sender's order.
/// </summary>
public class SendOrderingTests(Xunit.Abstractions.ITestOutputHelper output)
{
    private const int FloodBytes = 16 * 1024 * 1024;
    private const int Senders = 10;
    private const int FramesPerSender = 1000;
    private const int MaxPayload = 6000;
    private const int SendLimit = 32 * 1024;

    // Kernel buffers far smaller than what the awaitable senders alone send (2 x ~1.1 MB). The
    // reader starts only once one of them has had to wait: with the kernel's own buffers (on
    // loopback they took 4 MB from a peer that read nothing) both could finish without ever
    // waiting, and then nobody read while the blocking senders waited for the kernel: a blocking
    // Send gave up after its send timeout and returned 0 (seen in two fresh-clone runs; in 7 of
    // 150 rounds of a loop under load).
    private const int KernelBuffer = 16 * 1024;

    // --- Receive side ---

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Session_OnReceived_is_serial_and_in_order_under_a_flood_of_small_writes(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        var checker = new StreamChecker();
        harness.Probe.ConfigureSession = probe => probe.Received = (_, buffer, offset, size) => checker.Check(buffer, offset, size);
        Assert.True(harness.Start());

        var (peer, session, probe) = await harness.ConnectPeerAsync();
        using (peer)
        {
            await HarnessExtensions.RunBlocking(() =>
            {
                var random = new Random(7);
                var chunk = new byte[4096];
                long position = 0;
                while (position < FloodBytes)
                {
                    var size = (int)Math.Min(random.Next(1, chunk.Length + 1), FloodBytes - position);
                    Framing.FillPattern(chunk.AsSpan(0, size), position);
                    peer.Send(chunk, 0, size, SocketFlags.None);
                    position += size;
                }

                return position;
            }).WaitAsync(TimeSpan.FromSeconds(60));

            await Wait.UntilAsync(() => checker.Position == FloodBytes, "the session to receive the flood");
            Assert.False(probe.ReceivedOverlapped, "OnReceived ran concurrently with itself.");
            Assert.Null(checker.Error);
            Assert.Equal(FloodBytes, probe.ReceivedBytes);
            Assert.Equal(FloodBytes, session.BytesReceived);
        }
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Client_OnReceived_is_serial_and_in_order_under_a_flood_of_small_sends(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        Assert.True(harness.Start());

        var checker = new StreamChecker();
        var probe = new Probe { Received = (_, buffer, offset, size) => checker.Check(buffer, offset, size) };
        using var client = harness.CreateClient(probe);
        Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(Wait.Default));
        await harness.Probe.WaitForSessionsAsync(1);
        var session = harness.FindSession(harness.Probe.Sessions.Keys.Single())!;

        var random = new Random(11);
        var chunk = new byte[4096];
        long position = 0;
        while (position < FloodBytes)
        {
            var size = (int)Math.Min(random.Next(1, chunk.Length + 1), FloodBytes - position);
            Framing.FillPattern(chunk.AsSpan(0, size), position);
            Assert.True(await session.SendAsync(chunk.AsMemory(0, size)).AsTask().WaitAsync(Wait.Default));
            position += size;
        }

        await Wait.UntilAsync(() => checker.Position == FloodBytes, "the client to receive the flood");
        Assert.False(probe.ReceivedOverlapped, "OnReceived ran concurrently with itself.");
        Assert.Null(checker.Error);
        Assert.Equal(FloodBytes, probe.ReceivedBytes);
        Assert.Equal(FloodBytes, client.BytesReceived);
    }

    // --- Send side ---

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Session_sends_from_many_threads_never_interleave(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        Assert.True(harness.Start());

        var (peer, session, _) = await harness.ConnectPeerAsync();
        using (peer)
        {
            session.OptionSendBufferLimit = SendLimit;
            session.Socket!.SendBufferSize = KernelBuffer;
            peer.ReceiveBufferSize = KernelBuffer;
            using var senders = new ConcurrentSenders(session);

            // The peer starts reading only once a sender has had to wait, so backpressure really happens.
            var reader = new FrameReader(MaxPayload);
            var reading = Task.Run(async () =>
            {
                await Wait.UntilAsync(() => senders.WaitedOrFinished.IsSet, "a sender to wait for room");
                var buffer = new byte[65536];
                using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(60));
                while (true)
                {
                    var n = await peer.ReceiveAsync(buffer, SocketFlags.None, timeout.Token);
                    if (n == 0)
                        return;
                    reader.Feed(buffer.AsSpan(0, n));
                }
            });

            var watch = System.Diagnostics.Stopwatch.StartNew();
            await senders.RunAsync();
            output.WriteLine($"senders {watch.ElapsedMilliseconds} ms, {senders.Stats}");

            // A graceful disconnect sends what is still queued, then the peer reads the end of the stream.
            Assert.True(await HarnessExtensions.RunBlocking(session.Disconnect).WaitAsync(Wait.Default));
            output.WriteLine($"disconnect {watch.ElapsedMilliseconds} ms");
            await reading.WaitAsync(TimeSpan.FromSeconds(60));
            output.WriteLine($"read {watch.ElapsedMilliseconds} ms");
            senders.AssertReceived(reader);
        }
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Client_sends_from_many_threads_never_interleave(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        ConcurrentSenders? senders = null;
        var reader = new FrameReader(MaxPayload);
        harness.Probe.ConfigureSession = p => p.Received = (_, buffer, offset, size) =>
        {
            // Hold the first read until a client sender has had to wait, so backpressure really happens.
            senders!.WaitedOrFinished.Wait(Wait.Default);
            lock (reader)
                reader.Feed(buffer.AsSpan((int)offset, (int)size));
        };
        harness.Probe.Connected = session => session.Socket!.ReceiveBufferSize = KernelBuffer;
        Assert.True(harness.Start());

        var probe = new Probe();
        using var client = harness.CreateClient(probe);
        client.OptionSendBufferLimit = SendLimit;
        client.OptionSendBufferSize = KernelBuffer; // before connecting: also the socket's SO_SNDBUF
        using var owned = senders = new ConcurrentSenders(client);
        Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(Wait.Default));
        await harness.Probe.WaitForSessionsAsync(1);
        var sessionProbe = harness.Probe.Sessions.Values.Single();

        await senders.RunAsync();

        Assert.True(await HarnessExtensions.RunBlocking(client.Disconnect).WaitAsync(Wait.Default));
        Assert.Equal(DisconnectReason.PeerClosed, await sessionProbe.DisconnectedSignal.Task.WaitAsync(Wait.Default));
        lock (reader)
            senders.AssertReceived(reader);
    }

    /// <summary>Checks a received stream against the position-keyed pattern.</summary>
    private sealed class StreamChecker
    {
        private long _position;

        /// <summary>Bytes checked so far (updated after each check, so waiting on it waits for the check).</summary>
        public long Position => Interlocked.Read(ref _position);

        public string? Error { get; private set; }

        public void Check(byte[] buffer, long offset, long size)
        {
            if (Error is null)
            {
                var bad = Framing.FindPatternMismatch(buffer.AsSpan((int)offset, (int)size), _position);
                if (bad >= 0)
                    Error = $"Byte {_position + bad} is wrong: the stream was reordered, duplicated or lost bytes.";
            }

            Interlocked.Add(ref _position, size);
        }
    }

    /// <summary>
    /// <see cref="Senders"/> threads sending length-prefixed frames (sender id, sequence, filler)
    /// through every send overload at once; records which frames each send accepted.
    /// </summary>
    private sealed class ConcurrentSenders(StreamConnection target) : IDisposable
    {
        private readonly List<int>[] _accepted = Enumerable.Range(0, Senders).Select(_ => new List<int>()).ToArray();
        private long _acceptedBytes;
        private int _parked;
        private int _refused;
        private int _running;

        public int Parked => Volatile.Read(ref _parked);

        /// <summary>Set once an awaitable send has had to wait for room, or every sender is done.</summary>
        public ManualResetEventSlim WaitedOrFinished { get; } = new();

        public void Dispose() => WaitedOrFinished.Dispose();

        public async Task RunAsync()
        {
            using var start = new ManualResetEventSlim();
            var tasks = new Task[Senders];
            for (var i = 0; i < Senders; i++)
            {
                var sender = i;
                tasks[i] = Task.Factory.StartNew(
                    () =>
                    {
                        Interlocked.Increment(ref _running);
                        start.Wait(Wait.Default);
                        return SendAllAsync(sender);
                    },
                    CancellationToken.None,
                    TaskCreationOptions.LongRunning,
                    TaskScheduler.Default).Unwrap();
            }

            await Wait.UntilAsync(() => Volatile.Read(ref _running) == Senders, "every sender thread to start");
            start.Set();
            try
            {
                await Task.WhenAll(tasks).WaitAsync(TimeSpan.FromSeconds(60));
            }
            finally
            {
                WaitedOrFinished.Set();
            }
        }

        /// <summary>One sender: mode = sender % 8 picks the overload.</summary>
        private async Task SendAllAsync(int sender)
        {
            var random = new Random(sender);
            var reused = new byte[Framing.PrefixSize + MaxPayload + 3];
            var mode = sender % 8;
            for (var sequence = 0; sequence < FramesPerSender; sequence++)
            {
                // Mostly small frames, now and then one larger than a send chunk.
                var payload = random.Next(4) == 0 ? random.Next(2000, MaxPayload + 1) : random.Next(Framing.MinPayload, 300);
                var size = Framing.PrefixSize + payload;
                bool accepted;
                switch (mode)
                {
                    case 0:
                    {
                        var frame = Framing.Frame(sender, sequence, payload);
                        accepted = target.SendAsync(frame);
                        Array.Fill(frame, (byte)0xEE); // the caller may reuse its buffer at once
                        break;
                    }

                    case 1:
                        Framing.WriteFrame(reused, sender, sequence, payload);
                        accepted = target.SendAsync(new ReadOnlySpan<byte>(reused, 0, size));
                        Array.Fill(reused, (byte)0xEE);
                        break;

                    case 2:
                        Framing.WriteFrame(reused.AsSpan(3), sender, sequence, payload);
                        accepted = target.SendAsync(reused, 3, size);
                        Array.Fill(reused, (byte)0xEE);
                        break;

                    case 3:
                    case 6:
                    {
                        Framing.WriteFrame(reused, sender, sequence, payload);
                        var pending = target.SendAsync(reused.AsMemory(0, size));
                        if (!pending.IsCompleted)
                        {
                            Interlocked.Increment(ref _parked);
                            WaitedOrFinished.Set();
                        }

                        accepted = await pending;
                        Assert.True(accepted, "The awaitable send failed on an open connection.");
                        Array.Fill(reused, (byte)0xEE);
                        break;
                    }

                    case 4:
                    {
                        var frame = Framing.Frame(sender, sequence, payload);
                        Assert.Equal(size, target.Send(frame));
                        Array.Fill(frame, (byte)0xEE);
                        accepted = true;
                        break;
                    }

                    case 5:
                        Framing.WriteFrame(reused, sender, sequence, payload);
                        Assert.Equal(size, target.Send(new ReadOnlySpan<byte>(reused, 0, size)));
                        Array.Fill(reused, (byte)0xEE);
                        accepted = true;
                        break;

                    default:
                        Framing.WriteFrame(reused.AsSpan(3), sender, sequence, payload);
                        Assert.Equal(size, target.Send(reused, 3, size));
                        Array.Fill(reused, (byte)0xEE);
                        accepted = true;
                        break;
                }

                if (accepted)
                {
                    _accepted[sender].Add(sequence);
                    Interlocked.Add(ref _acceptedBytes, size);
                }
                else
                {
                    // A refused frame is simply not sent; back off a little before the next one.
                    Interlocked.Increment(ref _refused);
                    await Task.Delay(1);
                }
            }
        }

        public string Stats => $"parked {Parked}, refused {_refused}, accepted {string.Join("/", _accepted.Select(a => a.Count))}, bytes {_acceptedBytes}";

        public void AssertReceived(FrameReader reader)
        {
            Assert.Null(reader.Error);
            Assert.True(Parked > 0, "No awaitable send ever had to wait: the limit did not bite.");
            Assert.Equal(Volatile.Read(ref _acceptedBytes), reader.Bytes);
            for (var sender = 0; sender < Senders; sender++)
            {
                var got = reader.Sequences.TryGetValue(sender, out var list) ? list : [];
                // Modes 0-2 are refused while the queue is full and never park: behind parked senders
                // (who go first) such a sender may get nothing in, which is the engine's fairness, not
                // a fault (a fresh-clone run with the small kernel buffers saw sender 2 refused
                // throughout). Every sender that waits must have got its frames through.
                if (sender % 8 > 2)
                    Assert.True(_accepted[sender].Count > 0, $"Sender {sender} never got a frame accepted.");
                Assert.Equal(_accepted[sender], got);
            }
        }
    }
}
