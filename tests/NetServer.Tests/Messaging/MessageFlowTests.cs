using System;
using System.Buffers.Binary;
using System.Collections.Generic;
using System.IO;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Messaging;

/// <summary>Backpressure both ways: awaited sends that wait for room (and cancel cleanly), and the client's bounded receive queue.</summary>
[Collection("Messaging over sockets")]
public sealed class MessageFlowTests
{
    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task An_awaited_send_waits_for_the_peer_to_read_and_a_cancelled_one_leaves_the_stream_framed(TransportKind kind)
    {
        const int size = 16 * 1024;
        var connected = new TaskCompletionSource<MessageSession>(TaskCreationOptions.RunContinuationsAsynchronously);
        using var server = TestMessageServer.Create(kind, s => new DelegateSession(s)
        {
            Attached = session => session.Connection!.OptionSendBufferLimit = 64 * 1024,
            Connected = session => connected.TrySetResult(session),
        });
        Assert.True(server.Start());
        using var peer = await server.ConnectRawAsync(); // reads nothing until told
        var session = await connected.Task.WaitAsync(Wait.Default);

        // Sends complete at once while the queue and the kernel have room; the first one that does
        // not complete for a while waits for the peer.
        Task<bool>? waiting = null;
        var sequence = 0;
        for (; sequence < 20_000 && waiting is null; sequence++)
        {
            var send = session.SendAsync(TaggedPayload.Create(1, sequence, size).AsMemory()).AsTask();
            if (await Task.WhenAny(send, Task.Delay(300)) != send)
                waiting = send;
            else
                Assert.True(await send);
        }

        Assert.NotNull(waiting);
        Assert.True(session.BytesPending > 0);

        // Cancelled while waiting behind it: fails with OperationCanceledException, and none of it is sent.
        using var cancel = new CancellationTokenSource();
        var cancelled = session.SendAsync(TaggedPayload.Create(2, 0, size).AsMemory(), cancel.Token).AsTask();
        Assert.False(cancelled.IsCompleted);
        cancel.Cancel();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => cancelled.WaitAsync(Wait.Default));
        Assert.False(waiting.IsCompleted);
        var last = session.SendAsync(TaggedPayload.Create(3, 0, size).AsMemory()).AsTask();

        // The peer reads: the waiting sends complete, and the stream is whole frames, the cancelled one absent.
        var frames = new List<(int Sender, int Sequence)>();
        while (frames.Count == 0 || frames[^1].Sender != 3)
        {
            var header = await Wait.ReadExactlyAsync(peer, 4);
            var payload = await Wait.ReadExactlyAsync(peer, BinaryPrimitives.ReadInt32LittleEndian(header));
            Assert.Null(TaggedPayload.Verify(payload, out var sender, out var number));
            Assert.Equal(size, payload.Length);
            frames.Add((sender, number));
        }

        Assert.True(await waiting.WaitAsync(Wait.Default));
        Assert.True(await last.WaitAsync(Wait.Default));
        var expected = new List<(int, int)>();
        for (var i = 0; i < sequence; i++)
            expected.Add((1, i));
        expected.Add((3, 0));
        Assert.Equal(expected, frames);
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task A_client_that_does_not_read_keeps_a_bounded_queue_while_the_server_backs_up_then_gets_everything(TransportKind kind)
    {
        const int size = 32 * 1024;
        const int count = 2048; // 64 MiB
        var connected = new TaskCompletionSource<MessageSession>(TaskCreationOptions.RunContinuationsAsynchronously);
        using var server = TestMessageServer.Create(kind, s => new DelegateSession(s) { Connected = session => connected.TrySetResult(session) });
        Assert.True(server.Start());
        using var client = server.CreateClient();
        client.OptionReceiveQueueLimit = 1024 * 1024;
        Assert.True(await client.ConnectAsync().WaitAsync(Wait.Default));
        var session = await connected.Task.WaitAsync(Wait.Default);

        var accepted = 0;
        var sending = Task.Run(async () =>
        {
            var payload = new byte[size];
            for (var i = 0; i < count; i++)
            {
                TaggedPayload.Fill(payload, 5, i);
                Assert.True(await session.SendAsync(payload.AsMemory()));
                Volatile.Write(ref accepted, i + 1);
            }
        });

        var stalled = await HarnessExtensions.WaitUntilStableAsync(() => Volatile.Read(ref accepted), "the server's sends", TimeSpan.FromMilliseconds(500));
        Assert.True(stalled < count, $"The server sent all {count} messages to a client that reads nothing.");
        Assert.InRange((long)client.ReceiveQueueCount * size, 1, client.OptionReceiveQueueLimit + size);

        for (var i = 0; i < count; i++)
        {
            using var message = await client.ReceiveAsync().AsTask().WaitAsync(Wait.Default);
            Assert.Null(TaggedPayload.Verify(message.Span, out var sender, out var number));
            Assert.Equal((5, i, size), (sender, number, message.Length));
            Assert.True((long)client.ReceiveQueueCount * size <= client.OptionReceiveQueueLimit + size, $"{client.ReceiveQueueCount} messages queued");
        }

        await sending.WaitAsync(Wait.Default);
        Assert.Equal(0, client.ReceiveQueueCount);
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task ReceiveAllAsync_yields_every_message_in_order_and_ends_when_the_server_disconnects(TransportKind kind)
    {
        using var server = TestMessageServer.Create(kind, s => new DelegateSession(s)
        {
            Message = (session, _) =>
            {
                for (var i = 0; i < 100; i++)
                    session.SendAsync(TaggedPayload.Create(4, i, 8 + (i * 37)));
                session.Connection!.Disconnect();
            },
        });
        Assert.True(server.Start());
        using var client = server.CreateClient();
        Assert.True(await client.ConnectAsync().WaitAsync(Wait.Default));
        Assert.True(client.SendAsync("go"));

        var received = 0;
        await foreach (var message in client.ReceiveAllAsync().WithCancellation(CancellationToken.None))
        {
            using (message)
            {
                Assert.Null(TaggedPayload.Verify(message.Span, out _, out var number));
                Assert.Equal(received++, number);
            }
        }

        Assert.Equal(100, received);
        Assert.Equal(DisconnectReason.PeerClosed, client.DisconnectReason);
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task ReceiveAsync_after_the_server_left_drains_the_queue_then_throws_IOException(TransportKind kind)
    {
        var connected = new TaskCompletionSource<MessageSession>(TaskCreationOptions.RunContinuationsAsynchronously);
        using var server = TestMessageServer.Create(kind, s => new DelegateSession(s) { Connected = session => connected.TrySetResult(session) });
        Assert.True(server.Start());
        using var client = server.CreateClient();
        Assert.True(await client.ConnectAsync().WaitAsync(Wait.Default));
        var session = await connected.Task.WaitAsync(Wait.Default);

        for (var i = 0; i < 3; i++)
            Assert.True(session.SendAsync(TaggedPayload.Create(6, i, 100)));
        Assert.True(await HarnessExtensions.RunBlocking(session.Disconnect).WaitAsync(Wait.Default));
        await Wait.UntilAsync(() => !client.IsConnected, "the client to see the server leave");

        for (var i = 0; i < 3; i++)
        {
            using var message = await client.ReceiveAsync().AsTask().WaitAsync(Wait.Default);
            Assert.Null(TaggedPayload.Verify(message.Span, out _, out var number));
            Assert.Equal(i, number);
        }

        var ended = await Assert.ThrowsAsync<IOException>(() => client.ReceiveAsync().AsTask().WaitAsync(Wait.Default));
        Assert.Contains(nameof(DisconnectReason.PeerClosed), ended.Message, StringComparison.Ordinal);
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task A_pending_ReceiveAsync_can_be_cancelled_without_losing_the_next_message_and_fails_when_the_server_leaves(TransportKind kind)
    {
        var connected = new TaskCompletionSource<MessageSession>(TaskCreationOptions.RunContinuationsAsynchronously);
        using var server = TestMessageServer.Create(kind, s => new DelegateSession(s) { Connected = session => connected.TrySetResult(session) });
        Assert.True(server.Start());
        using var client = server.CreateClient();
        Assert.True(await client.ConnectAsync().WaitAsync(Wait.Default));
        var session = await connected.Task.WaitAsync(Wait.Default);

        using (var cancel = new CancellationTokenSource())
        {
            var pending = client.ReceiveAsync(cancel.Token).AsTask();
            Assert.False(pending.IsCompleted);
            cancel.Cancel();
            await Assert.ThrowsAnyAsync<OperationCanceledException>(() => pending.WaitAsync(Wait.Default));
        }

        using (var cancel = new CancellationTokenSource())
        {
            var enumeration = Task.Run(async () =>
            {
                await foreach (var message in client.ReceiveAllAsync(cancel.Token))
                    message.Dispose();
            });
            cancel.CancelAfter(100);
            await Assert.ThrowsAnyAsync<OperationCanceledException>(() => enumeration.WaitAsync(Wait.Default));
        }

        Assert.True(session.SendAsync(TaggedPayload.Create(8, 1, 64)));
        using (var next = await client.ReceiveAsync().AsTask().WaitAsync(Wait.Default))
            Assert.Equal(TaggedPayload.Create(8, 1, 64), next.ToArray());

        // A receive still waiting when the connection ends fails instead of hanging.
        var waiting = client.ReceiveAsync().AsTask();
        Assert.True(await HarnessExtensions.RunBlocking(session.Disconnect).WaitAsync(Wait.Default));
        await Assert.ThrowsAsync<IOException>(() => waiting.WaitAsync(Wait.Default));
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task A_message_built_in_many_writer_steps_arrives_as_one_message(TransportKind kind)
    {
        using var server = TestMessageServer.Create(kind, s => new EchoMessageSession(s));
        Assert.True(server.Start());
        using var client = server.CreateClient();
        Assert.True(await client.ConnectAsync().WaitAsync(Wait.Default));

        var random = new Random(3);
        foreach (var target in new[] { 1, 3000, 300_000 })
        {
            using var writer = client.StartMessage(random.Next(0, 100));
            var written = 0;
            while (written < target)
            {
                var hint = random.Next(0, 70_000);
                var span = random.Next(2) == 0 ? writer.GetSpan(hint) : writer.GetMemory(hint).Span;
                Assert.True(span.Length >= Math.Max(hint, 1));
                var step = Math.Min(target - written, random.Next(1, span.Length + 1));
                Framing.FillPattern(span.Slice(0, step), written);
                writer.Advance(step);
                written += step;
            }

            Assert.Equal(target, writer.WrittenCount);
            Assert.True(writer.Commit());
            Assert.Throws<InvalidOperationException>(() => writer.GetSpan());

            using var echo = await client.ReceiveAsync().AsTask().WaitAsync(Wait.Default);
            Assert.Equal(target, echo.Length);
            Assert.Equal(-1, Framing.FindPatternMismatch(echo.Span, 0));
        }
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task A_writer_disposed_without_Commit_sends_nothing(TransportKind kind)
    {
        using var server = TestMessageServer.Create(kind, s => new EchoMessageSession(s));
        Assert.True(server.Start());
        using var client = server.CreateClient();

        // Not connected yet: a message can be built, and is dropped.
        using (var offline = client.StartMessage(10))
        {
            offline.Write(new byte[300]);
            Assert.False(offline.Commit());
        }

        Assert.True(await client.ConnectAsync().WaitAsync(Wait.Default));
        using (var dropped = client.StartMessage())
        {
            dropped.Write(Framing.Pattern(0, 500));
            Framing.FillPattern(dropped.GetSpan(400_000).Slice(0, 400_000), 500);
            dropped.Advance(400_000);
        }

        Assert.True(client.SendAsync("next"));
        Assert.True(client.SendAsync("after"));
        using var next = await client.ReceiveAsync().AsTask().WaitAsync(Wait.Default);
        using var after = await client.ReceiveAsync().AsTask().WaitAsync(Wait.Default);
        Assert.Equal("next"u8.ToArray(), next.ToArray());
        Assert.Equal("after"u8.ToArray(), after.ToArray());
        Assert.Equal(0, client.ReceiveQueueCount);
    }
}
