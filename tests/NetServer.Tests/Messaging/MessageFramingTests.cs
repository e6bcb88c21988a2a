using System;
using System.Buffers;
using System.Buffers.Binary;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.IO;
using System.Net;
using System.Net.Sockets;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using NetServer.Tests.Streams;
using Xunit;

namespace NetServer.Tests.Messaging;

/// <summary>The wire format over real sockets: frames in any pieces, sizes at the limits, and bad length prefixes.</summary>
[Collection("Messaging over sockets")]
public sealed class MessageFramingTests
{
    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Frames_sent_byte_by_byte_and_in_random_splits_come_back_byte_for_byte(TransportKind kind)
    {
        using var server = TestMessageServer.Create(kind, s => new EchoMessageSession(s));
        Assert.True(server.Start());
        using var peer = await server.ConnectRawAsync();

        // Byte by byte: the server sees every header and payload cut at each position.
        var slow = Frames([0, 1, 2, 37, 300, 0], seed: 1);
        var echo = ReadAsync(peer, slow.Length);
        for (var i = 0; i < slow.Length; i++)
            await peer.SendAsync(slow.AsMemory(i, 1), SocketFlags.None);
        Assert.Equal(slow, await echo);

        // Random splits, with frames over the 64 KiB retention limit (reassembled on the server).
        var random = new Random(7);
        var sizes = new List<int>();
        for (var i = 0; i < 60; i++)
            sizes.Add(i % 15 == 7 ? random.Next(65_000, 200_000) : random.Next(0, 3000));
        var fast = Frames(sizes.ToArray(), seed: 2);
        echo = ReadAsync(peer, fast.Length);
        for (var offset = 0; offset < fast.Length;)
        {
            var part = Math.Min(fast.Length - offset, random.Next(1, 20_000));
            await peer.SendAsync(fast.AsMemory(offset, part), SocketFlags.None);
            offset += part;
        }

        Assert.Equal(fast, await echo);
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task With_a_small_receive_buffer_limit_longer_messages_are_reassembled(TransportKind kind)
    {
        using var server = TestMessageServer.Create(kind, s => new DelegateSession(s)
        {
            Attached = session => session.Connection!.OptionReceiveBufferLimit = 512,
            Message = (session, message) => session.SendAsync(message),
        });
        Assert.True(server.Start());
        using var peer = await server.ConnectRawAsync();

        var random = new Random(11);
        var sizes = new int[80];
        for (var i = 0; i < sizes.Length; i++)
            sizes[i] = i % 4 == 0 ? random.Next(505, 30_000) : random.Next(0, 509); // around the 512-byte limit
        var stream = Frames(sizes, seed: 4);
        var echo = ReadAsync(peer, stream.Length);
        for (var offset = 0; offset < stream.Length;)
        {
            var part = Math.Min(stream.Length - offset, random.Next(1, 2000));
            await peer.SendAsync(stream.AsMemory(offset, part), SocketFlags.None);
            offset += part;
        }

        Assert.Equal(stream, await echo);
    }

    [Theory]
    [MemberData(nameof(BadLengths))]
    public async Task A_bad_length_closes_only_that_connection_with_ProtocolError_and_a_clear_reason(TransportKind kind, int length, string reason)
    {
        var ended = new ConcurrentQueue<(DisconnectReason Reason, Exception? Exception)>();
        using var server = TestMessageServer.Create(kind, s => new DelegateSession(s)
        {
            Message = (session, message) => session.SendAsync(message),
            Ended = (session, why) => ended.Enqueue((why, session.Connection?.DisconnectException)),
        });
        server.OptionMaxMessageSize = 1000;
        Assert.True(server.Start());

        using var good = server.CreateClient();
        Assert.True(await good.ConnectAsync().WaitAsync(Wait.Default));
        await AssertEchoAsync(good, 1);

        // The bad peer is served until its bad prefix: a valid frame first comes back.
        using var bad = await server.ConnectRawAsync();
        var valid = Frames([10], seed: 3);
        await bad.SendAsync(valid, SocketFlags.None);
        Assert.Equal(valid, await ReadAsync(bad, valid.Length));
        var header = new byte[4];
        BinaryPrimitives.WriteInt32LittleEndian(header, length);
        await bad.SendAsync(header, SocketFlags.None);
        await AssertClosedAsync(bad);

        await Wait.UntilAsync(() => !ended.IsEmpty, "the bad session to end");
        Assert.True(ended.TryDequeue(out var end));
        Assert.Equal(DisconnectReason.ProtocolError, end.Reason);
        var violation = Assert.IsType<ProtocolViolationException>(end.Exception);
        Assert.Contains(reason, violation.Message, StringComparison.Ordinal);

        // The other connection goes on.
        await AssertEchoAsync(good, 2);
        Assert.True(good.IsConnected);
        Assert.Empty(ended);
    }

    public static TheoryData<TransportKind, int, string> BadLengths()
    {
        var data = new TheoryData<TransportKind, int, string>();
        foreach (var kind in new[] { TransportKind.Tcp, TransportKind.Uds, TransportKind.Ssl })
        {
            if (kind == TransportKind.Ssl && !SecureTransport.Enabled)
                continue;
            data.Add(kind, -1, "negative (-1)");
            data.Add(kind, int.MinValue, "negative");
            data.Add(kind, 1001, "1001 is over the maximum message size (1000 bytes)");
            data.Add(kind, int.MaxValue, "over the maximum message size (1000 bytes)");
        }

        return data;
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task The_server_accepts_exactly_its_maximum_and_closes_on_one_byte_more(TransportKind kind)
    {
        const int max = 70_000; // over the retention limit: the reassembly path checks it too
        var reasons = new TaskCompletionSource<DisconnectReason>(TaskCreationOptions.RunContinuationsAsynchronously);
        using var server = TestMessageServer.Create(kind, s => new DelegateSession(s)
        {
            Message = (session, message) => session.SendAsync(message),
            Ended = (_, why) => reasons.TrySetResult(why),
        });
        server.OptionMaxMessageSize = max;
        Assert.True(server.Start());
        using var client = server.CreateClient();
        Assert.True(await client.ConnectAsync().WaitAsync(Wait.Default));

        Assert.True(client.SendAsync(Framing.Pattern(1, max)));
        using (var echo = await client.ReceiveAsync().AsTask().WaitAsync(Wait.Default))
        {
            Assert.Equal(max, echo.Length);
            Assert.Equal(-1, Framing.FindPatternMismatch(echo.Span, 1));
        }

        // Sends are not limited by the receiver's maximum: the server refuses it.
        Assert.True(client.SendAsync(Framing.Pattern(2, max + 1)));
        Assert.Equal(DisconnectReason.ProtocolError, await reasons.Task.WaitAsync(Wait.Default));
        var failed = await Assert.ThrowsAsync<IOException>(() => client.ReceiveAsync().AsTask().WaitAsync(Wait.Default));
        Assert.Contains("connection closed", failed.Message, StringComparison.Ordinal);
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task A_client_refuses_a_message_over_its_MaxMessageSize_with_ProtocolError(TransportKind kind)
    {
        using var server = TestMessageServer.Create(kind, s => new DelegateSession(s)
        {
            Message = (session, message) => session.SendAsync(Framing.Pattern(0, BinaryPrimitives.ReadInt32LittleEndian(message))),
        });
        Assert.True(server.Start());
        using var client = server.CreateClient();
        client.MaxMessageSize = 1000;
        Assert.True(await client.ConnectAsync().WaitAsync(Wait.Default));

        Assert.True(client.SendAsync(BitConverter.GetBytes(1000)));
        using (var exact = await client.ReceiveAsync().AsTask().WaitAsync(Wait.Default))
            Assert.Equal(1000, exact.Length);

        Assert.True(client.SendAsync(BitConverter.GetBytes(1001)));
        var failed = await Assert.ThrowsAsync<IOException>(() => client.ReceiveAsync().AsTask().WaitAsync(Wait.Default));
        Assert.Contains(nameof(DisconnectReason.ProtocolError), failed.Message, StringComparison.Ordinal);
        Assert.Equal(DisconnectReason.ProtocolError, client.DisconnectReason);
        var violation = Assert.IsType<ProtocolViolationException>(client.Transport.DisconnectException);
        Assert.Contains("1001 is over the maximum message size (1000 bytes)", violation.Message, StringComparison.Ordinal);
        await Wait.UntilAsync(() => server.ConnectedSessions == 0, "the server to see the client leave");
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Zero_length_messages_are_delivered_as_empty_messages_by_every_send(TransportKind kind)
    {
        var lengths = new ConcurrentQueue<int>();
        using var server = TestMessageServer.Create(kind, s => new DelegateSession(s)
        {
            Message = (session, message) =>
            {
                lengths.Enqueue(message.Length);
                session.SendAsync(message);
            },
        });
        server.OptionMaxMessageSize = 0; // only empty messages are allowed
        Assert.True(server.Start());
        using var client = server.CreateClient();
        Assert.True(await client.ConnectAsync().WaitAsync(Wait.Default));

        Assert.True(client.SendAsync(Array.Empty<byte>()));
        Assert.True(client.SendAsync(ReadOnlySpan<byte>.Empty));
        Assert.True(client.SendAsync(ReadOnlySequence<byte>.Empty));
        Assert.True(client.SendAsync(string.Empty));
        Assert.True(await client.SendAsync(ReadOnlyMemory<byte>.Empty).AsTask().WaitAsync(Wait.Default));
        using (var writer = client.StartMessage())
            Assert.True(writer.Commit());

        for (var i = 0; i < 6; i++)
        {
            using var message = await client.ReceiveAsync().AsTask().WaitAsync(Wait.Default);
            Assert.Equal(0, message.Length);
            Assert.True(message.Span.IsEmpty);
        }

        Assert.Equal([0, 0, 0, 0, 0, 0], lengths.ToArray());
        Assert.Equal(0, client.ReceiveQueueCount);
        Assert.True(client.IsConnected);
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Messages_sent_as_sequences_arrive_as_one_message_each(TransportKind kind)
    {
        using var server = TestMessageServer.Create(kind, s => new EchoMessageSession(s));
        Assert.True(server.Start());
        using var client = server.CreateClient();
        Assert.True(await client.ConnectAsync().WaitAsync(Wait.Default));

        var whole = Framing.Pattern(0, 3000);
        Assert.True(client.SendAsync(Segments.Of(whole.AsMemory(0, 10), whole.AsMemory(10, 0), whole.AsMemory(10, 2990))));
        Assert.True(client.SendAsync(Segments.Of(whole.AsMemory(0, 1), whole.AsMemory(1, 2))));
        using var first = await client.ReceiveAsync().AsTask().WaitAsync(Wait.Default);
        using var second = await client.ReceiveAsync().AsTask().WaitAsync(Wait.Default);
        Assert.Equal(whole, first.ToArray());
        Assert.Equal(whole.AsSpan(0, 3).ToArray(), second.ToArray());
    }

    /// <summary>Frames back to back: each a little-endian length and a pattern payload.</summary>
    internal static byte[] Frames(int[] sizes, int seed)
    {
        var stream = new List<byte>();
        var position = seed * 1_000_000L;
        foreach (var size in sizes)
        {
            var header = new byte[4];
            BinaryPrimitives.WriteInt32LittleEndian(header, size);
            stream.AddRange(header);
            stream.AddRange(Framing.Pattern(position, size));
            position += size;
        }

        return stream.ToArray();
    }

    private static Task<byte[]> ReadAsync(Socket socket, int count) => Wait.ReadExactlyAsync(socket, count);

    private static async Task AssertEchoAsync(MessageClient client, int tag)
    {
        var payload = TaggedPayload.Create(tag, tag, 50);
        Assert.True(client.SendAsync(payload));
        using var echo = await client.ReceiveAsync().AsTask().WaitAsync(Wait.Default);
        Assert.Equal(payload, echo.ToArray());
    }

    /// <summary>Waits for the server to close the raw peer's connection (an end of stream or a reset), and unless <paramref name="multicastsAllowed"/>, that nothing more came.</summary>
    internal static async Task AssertClosedAsync(Socket socket, bool multicastsAllowed = false)
    {
        try
        {
            var rest = await Wait.ReadToEndAsync(socket);
            if (!multicastsAllowed)
                Assert.Empty(rest);

            // End our side too, as a well-behaved peer does: the server's graceful close waits for it
            // (up to its OptionDisconnectTimeout) before the session's OnDisconnected runs.
            socket.Shutdown(SocketShutdown.Both);
        }
        catch (SocketException)
        {
            // A reset is a close too.
        }
    }
}
