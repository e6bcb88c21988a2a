using System;
using System.Buffers.Binary;
using System.Collections.Concurrent;
using System.Linq;
using System.Net.Sockets;
using System.Text;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Messaging;

/// <summary>
/// <c>OnMessagesDelivered</c> ends every read: after that read's messages (none when the read held
/// only part of one), on their thread, once the session's own answers from them were handed to the
/// connection, and before the next read's first message.
/// </summary>
[Collection("Messaging over sockets")]
public sealed class MessageDeliveryEndTests
{
    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Every_read_ends_with_the_hook_after_its_messages_on_their_thread_with_the_answers_sent(TransportKind kind)
    {
        var events = new ConcurrentQueue<Event>();
        using var server = TestMessageServer.Create(kind, s => new RecordingSession(s, events));
        Assert.True(server.Start());
        using var peer = await server.ConnectRawAsync();

        // Half of a header: a read with no whole message still ends with the hook.
        var frames = Frames("x", "y", "z");
        await peer.SendAsync(frames.AsMemory(0, 2), SocketFlags.None);
        await Wait.UntilAsync(() => events.Any(e => e.Kind == "end"), "the hook after a read with half a header");
        Assert.All(events, e => Assert.Equal("end", e.Kind));

        // The rest in one write: three messages, each answered from OnMessage.
        await peer.SendAsync(frames.AsMemory(2), SocketFlags.None);
        foreach (var expected in new[] { "a:x", "a:y", "a:z" })
        {
            var length = BinaryPrimitives.ReadInt32LittleEndian(await Wait.ReadExactlyAsync(peer, 4));
            Assert.Equal(expected, Encoding.ASCII.GetString(await Wait.ReadExactlyAsync(peer, length)));
        }

        await Wait.UntilAsync(() => events.LastOrDefault() is { Kind: "end" } && events.Count(e => e.Kind == "m") == 3, "the hook after the last message");
        var list = events.ToArray();
        Assert.Equal(["x", "y", "z"], list.Where(e => e.Kind == "m").Select(e => e.Text));
        for (var i = 0; i < list.Length; i++)
        {
            if (list[i].Kind != "end")
                continue;
            Assert.False(list[i].HeldBatch, "the hook ran while the session's answers were still held back");
            if (i > 0 && list[i - 1].Kind == "m")
                Assert.Equal(list[i - 1].Thread, list[i].Thread);
        }
    }

    private static byte[] Frames(params string[] messages)
    {
        var bytes = new byte[messages.Sum(m => 4 + m.Length)];
        var offset = 0;
        foreach (var message in messages)
        {
            BinaryPrimitives.WriteInt32LittleEndian(bytes.AsSpan(offset), message.Length);
            offset += 4 + Encoding.ASCII.GetBytes(message, bytes.AsSpan(offset + 4));
        }

        return bytes;
    }

    private sealed record Event(string Kind, string Text, int Thread, bool HeldBatch);

    private sealed class RecordingSession(MessageServer server, ConcurrentQueue<Event> events) : MessageSession(server)
    {
        protected override void OnMessage(ReadOnlySpan<byte> message)
        {
            var text = Encoding.ASCII.GetString(message);
            events.Enqueue(new Event("m", text, Environment.CurrentManagedThreadId, false));
            SendAsync(Encoding.ASCII.GetBytes("a:" + text)); // batched until the read's messages are delivered
        }

        // HoldsBatch: the answers' batch is still held back (not yet handed to the connection).
        protected override void OnMessagesDelivered() => events.Enqueue(new Event("end", "", Environment.CurrentManagedThreadId, HoldsBatch));
    }
}
