using System;
using System.Buffers;
using System.Collections.Concurrent;
using System.IO;
using System.Linq;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Streams;

/// <summary>
/// The protocol seam: a <see cref="StreamProtocol"/> hosted by any session or client parses
/// retained input in place, may switch protocols mid-stream, and builds its frames with the
/// writer and multi-part sends, over TCP, Unix sockets and TLS alike.
/// </summary>
public sealed class ProtocolTests
{
    private static readonly TimeSpan s_timeout = TimeSpan.FromSeconds(30);

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Frames_split_anywhere_are_parsed_in_place_from_retained_input_and_echoed_whole(TransportKind kind)
    {
        const int Count = 1500;
        await using var harness = new ServerHarness(kind);
        var protocols = new ConcurrentBag<FrameProtocol>();
        harness.Probe.ConfigureSession = probe => probe.Connected = session =>
        {
            var protocol = new FrameProtocol { Frame = static (p, frame) => EchoWithWriter(p.Connection!, frame) };
            protocols.Add(protocol);
            session.Protocol = protocol;
        };
        Assert.True(harness.Start());

        using var peer = await harness.ConnectRawAsync();
        if (kind == TransportKind.Tcp)
            peer.NoDelay = true;
        var random = new Random(11);
        var stream = new MemoryStream();
        var sizes = new int[Count];
        for (var i = 0; i < Count; i++)
        {
            sizes[i] = random.Next(Framing.MinPayload, i % 100 == 0 ? 20_000 : 900);
            stream.Write(Framing.Frame(7, i, sizes[i]));
        }

        var bytes = stream.ToArray();
        var reading = ReadFramesAsync(peer, bytes.Length);

        // The first frames one byte per write, the rest in random pieces: frames split anywhere.
        var position = 0;
        var byteByByte = Framing.PrefixSize * 20 + sizes.Take(20).Sum();
        while (position < bytes.Length)
        {
            var piece = position < byteByByte ? 1 : Math.Min(random.Next(1, 1500), bytes.Length - position);
            await peer.SendAsync(bytes.AsMemory(position, piece), SocketFlags.None).AsTask().WaitAsync(s_timeout);
            position += piece;
        }

        var reader = await reading;
        Assert.Null(reader.Error);
        Assert.Equal(Count, reader.Frames);
        Assert.Equal(Enumerable.Range(0, Count), reader.Sequences[7]);

        var protocol = Assert.Single(protocols);
        Assert.Null(protocol.Error);
        Assert.Equal(Count, protocol.Frames);
        Assert.True(protocol.PartialCalls > 0, "No delivery left a partial frame behind: retained input was not exercised.");
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task A_frame_larger_than_the_receive_limit_closes_that_connection_with_ReceiveBufferFull_and_others_go_on(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        harness.Probe.ConfigureSession = probe => probe.Connected = session =>
        {
            session.OptionReceiveBufferLimit = 1024;
            session.Protocol = new FrameProtocol { Frame = static (p, frame) => EchoWithWriter(p.Connection!, frame) };
        };
        Assert.True(harness.Start());

        var (bad, badSession, badProbe) = await harness.ConnectPeerAsync();
        var (good, _, _) = await harness.ConnectPeerAsync();
        using (bad)
        using (good)
        {
            // A frame whose payload alone is past the 1 KiB limit: it can never be whole in the buffer.
            await bad.SendAsync(Framing.Frame(1, 0, 5000), SocketFlags.None);
            Assert.Equal(DisconnectReason.ReceiveBufferFull, await badProbe.DisconnectedSignal.Task.WaitAsync(s_timeout));
            Assert.Contains("error:MessageSize", badProbe.Events);
            var exception = Assert.IsType<InvalidDataException>(badSession.DisconnectException);
            Assert.Contains("1024", exception.Message);

            // Frames up to the limit still work on the other connection.
            var frame = Framing.Frame(2, 0, 1000);
            var reading = ReadFramesAsync(good, frame.Length);
            await good.SendAsync(frame, SocketFlags.None);
            var reader = await reading;
            Assert.Null(reader.Error);
            Assert.Equal(1, reader.Frames);
        }
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Switching_protocol_inside_OnReceived_hands_the_unconsumed_bytes_to_the_new_one_at_once(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        var lines = new ConcurrentQueue<string>();
        var upgraded = new CollectingProtocol();
        harness.Probe.ConfigureSession = probe => probe.Connected = session => session.Protocol = new LineProtocol
        {
            Line = (protocol, line) =>
            {
                lines.Enqueue(line);
                if (line == "UPGRADE")
                    protocol.Connection!.Protocol = upgraded;
            },
        };
        Assert.True(harness.Start());

        var (peer, session, _) = await harness.ConnectPeerAsync();
        using (peer)
        {
            // One write: the new protocol's bytes arrive together with the line that switches to it,
            // and nothing follows them, so they can only reach it from the retained buffer.
            await peer.SendAsync("hello\nUPGRADE\nbinary\0tail"u8.ToArray(), SocketFlags.None);
            await Wait.UntilAsync(() => upgraded.Bytes.Length == 11, () => $"the upgraded protocol to get its 11 bytes (has {upgraded.Bytes.Length})");
            Assert.Equal("binary\0tail", System.Text.Encoding.ASCII.GetString(upgraded.Bytes));
            Assert.Equal(["hello", "UPGRADE"], lines);
            Assert.Same(upgraded, session.Protocol);
            Assert.Same(session, upgraded.Connection);
        }
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Writer_and_multipart_sends_from_many_threads_are_never_interleaved(TransportKind kind)
    {
        const int Senders = 6;
        const int PerSender = 300;
        await using var harness = new ServerHarness(kind);
        var sent = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        long total = 0;
        var plan = new int[Senders, PerSender];
        var random = new Random(5);
        for (var s = 0; s < Senders; s++)
        {
            for (var i = 0; i < PerSender; i++)
                plan[s, i] = i % 50 == 7 ? random.Next(20_000, 70_000) : random.Next(Framing.MinPayload, 1500);
        }

        foreach (var size in plan)
            total += Framing.PrefixSize + size;
        harness.Probe.ConfigureSession = probe => probe.Connected = session => _ = Task.Run(async () =>
        {
            try
            {
                var tasks = new Task[Senders];
                for (var s = 0; s < Senders; s++)
                {
                    var sender = s;
                    tasks[s] = Task.Run(async () =>
                    {
                        for (var i = 0; i < PerSender; i++)
                        {
                            var ok = i % 2 == 0
                                ? await SendWithWriterAsync(session, sender, i, plan[sender, i])
                                : await SendAsSequenceAsync(session, sender, i, plan[sender, i]);
                            Assert.True(ok, $"Sender {sender} frame {i} was not accepted.");
                        }
                    });
                }

                await Task.WhenAll(tasks);
                sent.TrySetResult();
            }
            catch (Exception e)
            {
                sent.TrySetException(e);
            }
        });
        Assert.True(harness.Start());

        using var peer = await harness.ConnectRawAsync();
        var reader = await ReadFramesAsync(peer, total);
        await sent.Task.WaitAsync(s_timeout);
        Assert.Null(reader.Error);
        Assert.Equal(Senders * PerSender, reader.Frames);
        for (var s = 0; s < Senders; s++)
            Assert.Equal(Enumerable.Range(0, PerSender), reader.Sequences[s]);
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task A_client_hosts_a_protocol_too_and_its_hooks_run_in_order(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        harness.Probe.ConfigureSession = probe => probe.Received = static (session, buffer, offset, size) =>
            session.SendAsync(buffer, offset, size);
        Assert.True(harness.Start());

        var probe = new Probe();
        var got = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var protocol = new FrameProtocol();
        protocol.Frame = (p, frame) =>
        {
            if (p.Frames == 100)
                got.TrySetResult();
        };
        probe.Connected = client => protocol.Events.Enqueue("client-connected");
        var client = harness.CreateClient(probe);
        client.Protocol = protocol;
        Assert.Equal(["attached"], protocol.Events);
        Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout));
        for (var i = 0; i < 100; i++)
            Assert.True(client.SendAsync(Framing.Frame(3, i, 100)));
        await got.Task.WaitAsync(s_timeout);
        Assert.Null(protocol.Error);
        Assert.Equal(0, probe.ReceivedBytes); // the protocol took the bytes, not OnReceived

        await client.DisconnectAsync(CancellationToken.None);
        await probe.DisconnectedSignal.Task.WaitAsync(s_timeout);
        Assert.Equal(["attached", "client-connected", "connected", "disconnected:LocalDisconnect"], protocol.Events);
        client.Protocol = null;
        Assert.Equal("detached", protocol.Events.Last());
        Assert.Null(protocol.Connection);
        client.Dispose();
    }

    [Fact]
    public void A_protocol_serves_one_connection()
    {
        using var first = new TcpClient("127.0.0.1", 1);
        using var second = new TcpClient("127.0.0.1", 1);
        var protocol = new FrameProtocol();
        first.Protocol = protocol;
        Assert.Throws<InvalidOperationException>(() => second.Protocol = protocol);
        first.Protocol = null;
        second.Protocol = protocol;
        Assert.Same(second, protocol.Connection);
    }

    // --- Helpers ---

    /// <summary>Echoes a frame through a writer: the prefix through GetSpan/Advance, the payload through Write.</summary>
    internal static void EchoWithWriter(StreamConnection connection, ReadOnlySpan<byte> frame)
    {
        using var writer = connection.StartSend(frame.Length);
        var header = writer.GetSpan(Framing.PrefixSize);
        frame[..Framing.PrefixSize].CopyTo(header);
        writer.Advance(Framing.PrefixSize);
        writer.Write(frame[Framing.PrefixSize..]);
        Assert.Equal(frame.Length, writer.WrittenCount);
        Assert.True(writer.Commit(), "The echo was refused.");
    }

    private static ValueTask<bool> SendWithWriterAsync(StreamConnection connection, int sender, int sequence, int payload)
    {
        var frame = Framing.Frame(sender, sequence, payload);
        var writer = connection.StartSend();
        var span = writer.GetSpan(Framing.PrefixSize);
        frame.AsSpan(0, Framing.PrefixSize).CopyTo(span);
        writer.Advance(Framing.PrefixSize);
        writer.Write(frame.AsSpan(Framing.PrefixSize, payload / 2));
        writer.Write(frame.AsSpan(Framing.PrefixSize + (payload / 2)));
        return writer.CommitAsync();
    }

    private static ValueTask<bool> SendAsSequenceAsync(StreamConnection connection, int sender, int sequence, int payload)
    {
        var frame = Framing.Frame(sender, sequence, payload);
        var cut = Framing.PrefixSize + (payload / 3);
        var sequenceOfParts = Segments.Of(frame.AsMemory(0, Framing.PrefixSize), frame.AsMemory(Framing.PrefixSize, cut - Framing.PrefixSize), frame.AsMemory(cut));
        return connection.SendAsync(sequenceOfParts, CancellationToken.None);
    }

    /// <summary>Reads <paramref name="total"/> bytes of frames from <paramref name="peer"/> and checks them.</summary>
    internal static async Task<FrameReader> ReadFramesAsync(Socket peer, long total)
    {
        var reader = new FrameReader(1 << 20);
        var buffer = new byte[64 * 1024];
        using var cts = new CancellationTokenSource(s_timeout);
        while (reader.Bytes < total)
        {
            var read = await peer.ReceiveAsync(buffer, SocketFlags.None, cts.Token);
            if (read == 0)
                break;
            reader.Feed(buffer.AsSpan(0, read));
        }

        return reader;
    }
}

/// <summary>Builds a multi-segment <see cref="ReadOnlySequence{T}"/> from separate memories.</summary>
internal sealed class Segments : ReadOnlySequenceSegment<byte>
{
    private Segments(ReadOnlyMemory<byte> memory, long runningIndex)
    {
        Memory = memory;
        RunningIndex = runningIndex;
    }

    public static ReadOnlySequence<byte> Of(params ReadOnlyMemory<byte>[] parts)
    {
        var first = new Segments(parts[0], 0);
        var last = first;
        for (var i = 1; i < parts.Length; i++)
        {
            var next = new Segments(parts[i], last.RunningIndex + last.Memory.Length);
            last.Next = next;
            last = next;
        }

        return new ReadOnlySequence<byte>(first, 0, last, last.Memory.Length);
    }
}
