using System;
using System.Buffers.Binary;
using System.Collections.Generic;
using System.Net.Sockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Messaging;

/// <summary>
/// The answers of one delivery are batched into one send: they keep their order against every
/// other way the session sends or closes from its OnMessage, nothing accepted is lost when the
/// batch must wait for room, and an idle session holds no batch memory.
/// </summary>
[Collection("Messaging over sockets")]
public sealed class MessageBatchTests
{
    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Batched_answers_keep_their_order_against_large_raw_and_multicast_sends_and_a_disconnect(TransportKind kind)
    {
        using var server = TestMessageServer.Create(kind, s => new DelegateSession(s)
        {
            Message = static (session, _) =>
            {
                // Everything inside one OnMessage: small answers are batched, the rest are not.
                session.SendAsync(Encoding.ASCII.GetBytes("a1"));
                session.SendAsync(Encoding.ASCII.GetBytes("a2"));
                session.SendAsync(Encoding.ASCII.GetBytes("a3"));
                session.SendAsync(new byte[5000]); // over 1 KiB: the message writer
                var raw = new byte[7];
                BinaryPrimitives.WriteInt32LittleEndian(raw, 3);
                Encoding.ASCII.GetBytes("raw", raw.AsSpan(4));
                session.Connection!.SendAsync(raw); // the connection's own send, bypassing the protocol
                session.SendAsync(Encoding.ASCII.GetBytes("b"));
                session.Server.Multicast(Encoding.ASCII.GetBytes("m"));
                session.SendAsync(Encoding.ASCII.GetBytes("c"));
                session.Connection!.Disconnect(); // the last answer still goes out before the close
            },
        });
        Assert.True(server.Start());
        using var client = server.CreateClient();
        Assert.True(await client.ConnectAsync().WaitAsync(Wait.Default));
        Assert.True(client.SendAsync(Encoding.ASCII.GetBytes("go")));

        var received = new List<string>();
        await foreach (var message in client.ReceiveAllAsync().WithCancellation(new CancellationTokenSource(Wait.Default).Token))
        {
            using (message)
                received.Add(message.Length == 5000 ? "big" : Encoding.ASCII.GetString(message.Span));
        }

        Assert.Equal(["a1", "a2", "a3", "big", "raw", "b", "m", "c"], received);
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task A_batch_that_must_wait_for_room_loses_no_accepted_answer(TransportKind kind)
    {
        const int Requests = 4000;
        const int AnswerSize = 900;
        var accepted = 0;
        var refused = 0;
        var requests = 0;
        using var server = TestMessageServer.Create(kind, s => new DelegateSession(s)
        {
            Attached = static session => session.Connection!.OptionSendBufferLimit = 16 * 1024,
            Connected = static session => session.Connection!.Socket!.SendBufferSize = 4096,
            Message = (session, _) =>
            {
                if (session.SendAsync(TaggedPayload.Create(1, requests, AnswerSize)))
                    Interlocked.Increment(ref accepted);
                else
                    Interlocked.Increment(ref refused);
                Interlocked.Increment(ref requests);
            },
        });
        Assert.True(server.Start());
        using var peer = await server.ConnectRawAsync();
        peer.ReceiveBufferSize = 4096;

        // All requests in one write, so one delivery answers many of them; the peer does not read
        // yet. The first full batch goes into the empty queue; the next one must wait for room, and
        // the answers after it meet the send limit one by one (refused), until the session, which
        // answers what it receives, stops reading.
        var requestBytes = new byte[Requests * 12];
        for (var i = 0; i < Requests; i++)
            BinaryPrimitives.WriteInt32LittleEndian(requestBytes.AsSpan(i * 12), 8);
        var writing = peer.SendAsync(requestBytes, SocketFlags.None);
        await Wait.UntilAsync(() => Volatile.Read(ref refused) > 0, "an answer refused by the send limit (the batch waiting for room)");

        // The peer reads: every accepted answer arrives, whole and in order; refused ones are absent.
        var last = -1;
        var read = 0;
        while (Volatile.Read(ref requests) < Requests || read < Volatile.Read(ref accepted))
        {
            var header = await Wait.ReadExactlyAsync(peer, 4);
            Assert.Equal(AnswerSize, BinaryPrimitives.ReadInt32LittleEndian(header));
            var payload = await Wait.ReadExactlyAsync(peer, AnswerSize);
            Assert.Null(TaggedPayload.Verify(payload, out _, out var sequence));
            Assert.True(sequence > last, $"answer {sequence} came after {last}");
            last = sequence;
            read++;
        }

        await writing.WaitAsync(Wait.Default);
        Assert.Equal(Requests, Volatile.Read(ref accepted) + Volatile.Read(ref refused));
        Assert.Equal(Volatile.Read(ref accepted), read);
        using var quiet = new CancellationTokenSource(TimeSpan.FromMilliseconds(300));
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await peer.ReceiveAsync(new byte[1], SocketFlags.None, quiet.Token));
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task At_most_one_batch_waits_beyond_the_send_limit_however_long_the_peer_sends_without_reading(TransportKind kind)
    {
        const int Requests = 1_000_000;
        const int AnswerSize = 64;
        var accepted = 0;
        var requests = 0;
        using var server = TestMessageServer.Create(kind, s => new DelegateSession(s)
        {
            Attached = static session =>
            {
                // No pause on a send backlog: the send limit is the only guard left, as an
                // application may choose; the batch must not get around it.
                session.Connection!.OptionSendBufferLimit = 16 * 1024;
                session.Connection.OptionSendHighWaterMark = 0;
            },
            Connected = static session => session.Connection!.Socket!.SendBufferSize = 4096,
            Message = (session, _) =>
            {
                if (session.SendAsync(new byte[AnswerSize]))
                    Interlocked.Increment(ref accepted);
                Interlocked.Increment(ref requests);
            },
        });
        Assert.True(server.Start());
        using var peer = await server.ConnectRawAsync();
        peer.ReceiveBufferSize = 4096;

        // Empty requests (a 4-byte zero length each), many deliveries of them; the peer never reads.
        // The write itself stalls once the session stops reading (that is the backpressure).
        var requestBytes = new byte[Requests * 4];
        var writing = peer.SendAsync(requestBytes, SocketFlags.None);
        await HarnessExtensions.WaitUntilStableAsync(() => Volatile.Read(ref requests), "the session's deliveries", TimeSpan.FromMilliseconds(500));

        // Accepted answers are what the kernel, the send limit and one waiting batch hold: bounded,
        // not one 64 KiB batch parked per delivery for as long as the peer sends.
        var acceptedBytes = (long)Volatile.Read(ref accepted) * (AnswerSize + 4);
        peer.Dispose();
        await writing.ContinueWith(static _ => { }, TaskScheduler.Default).WaitAsync(Wait.Default); // done or failed by the close
        Assert.True(acceptedBytes < 2 * 1024 * 1024, $"{acceptedBytes} bytes of answers accepted for a peer that reads nothing");
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Answers_batched_before_a_protocol_switch_or_a_writer_commit_go_first(TransportKind kind)
    {
        using var server = TestMessageServer.Create(kind, s => new DelegateSession(s)
        {
            Message = static (session, request) =>
            {
                if (request[0] == (byte)'w')
                {
                    // A writer started before a small answer and committed after it.
                    using var writer = session.StartMessage();
                    writer.Write(Encoding.ASCII.GetBytes("big"));
                    session.SendAsync(Encoding.ASCII.GetBytes("ack"));
                    writer.Commit();
                    return;
                }

                session.SendAsync(Encoding.ASCII.GetBytes("ok"));
                session.Connection!.Protocol = new GreetingProtocol(); // its greeting follows the answer
            },
        });
        Assert.True(server.Start());
        using var client = server.CreateClient();
        Assert.True(await client.ConnectAsync().WaitAsync(Wait.Default));
        Assert.True(client.SendAsync(Encoding.ASCII.GetBytes("w")));
        Assert.True(client.SendAsync(Encoding.ASCII.GetBytes("switch")));

        var received = new List<string>();
        for (var i = 0; i < 4; i++)
        {
            using var message = await client.ReceiveAsync().AsTask().WaitAsync(Wait.Default);
            received.Add(Encoding.ASCII.GetString(message.Span));
        }

        Assert.Equal(["ack", "big", "ok", "hello"], received);
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Small_messages_built_with_a_writer_inside_OnMessage_join_the_batch_in_order(TransportKind kind)
    {
        var joined = new List<bool>();
        using var server = TestMessageServer.Create(kind, s => new DelegateSession(s)
        {
            Message = (session, _) =>
            {
                using (var writer = session.StartMessage(16))
                {
                    Encoding.ASCII.GetBytes("w1", writer.GetSpan(2));
                    writer.Advance(2);
                    writer.Write(Encoding.ASCII.GetBytes("+"));
                    Assert.True(writer.Commit());
                }

                lock (joined)
                    joined.Add(session.HoldsBatch); // held for one send at the end of the delivery, not sent alone
                session.SendAsync(Encoding.ASCII.GetBytes("a"));

                using (var writer = session.StartMessage())
                {
                    writer.Write(Encoding.ASCII.GetBytes("w2"));
                    session.SendAsync(Encoding.ASCII.GetBytes("b")); // committed later: goes after b
                    writer.Write(new byte[3000]); // past 1 KiB: moves into the send queue, after w1+ and a
                    Assert.True(writer.Commit());
                }

                using (var writer = session.StartMessage(8))
                {
                    writer.Write(Encoding.ASCII.GetBytes("w3"));
                    Assert.True(writer.CommitAsync().AsTask().IsCompletedSuccessfully); // awaitable commit: room, so done at once
                }

                session.SendAsync(Encoding.ASCII.GetBytes("c"));
            },
        });
        Assert.True(server.Start());
        using var client = server.CreateClient();
        Assert.True(await client.ConnectAsync().WaitAsync(Wait.Default));
        Assert.True(client.SendAsync(Encoding.ASCII.GetBytes("go")));

        var received = new List<string>();
        for (var i = 0; i < 6; i++)
        {
            using var message = await client.ReceiveAsync().AsTask().WaitAsync(Wait.Default);
            received.Add(message.Length > 1000 ? $"{Encoding.ASCII.GetString(message.Span[..2])}+{message.Length - 2}" : Encoding.ASCII.GetString(message.Span));
        }

        Assert.Equal(["w1+", "a", "b", "w2+3000", "w3", "c"], received);
        lock (joined)
            Assert.Equal([true], joined);
    }

    private sealed class GreetingProtocol : MessageProtocol
    {
        protected internal override void OnConnected() => SendAsync(Encoding.ASCII.GetBytes("hello"));
    }

    [Theory]
    [MemberData(nameof(Transports.Plain), MemberType = typeof(Transports))]
    public async Task An_idle_session_holds_no_batch_memory_after_answering(TransportKind kind)
    {
        var answered = new TaskCompletionSource<MessageSession>(TaskCreationOptions.RunContinuationsAsynchronously);
        using var server = TestMessageServer.Create(kind, s => new DelegateSession(s)
        {
            Message = (session, message) =>
            {
                session.SendAsync(message);
                answered.TrySetResult(session);
            },
        });
        Assert.True(server.Start());
        using var client = server.CreateClient();
        Assert.True(await client.ConnectAsync().WaitAsync(Wait.Default));
        Assert.True(client.SendAsync(new byte[16]));
        using (var reply = await client.ReceiveAsync().AsTask().WaitAsync(Wait.Default))
            Assert.Equal(16, reply.Length);
        // The reply may reach the client before the delivery that sent it has returned its batch.
        var session = await answered.Task.WaitAsync(Wait.Default);
        await Wait.UntilAsync(() => !session.HoldsBatch, "the session to give its batch memory back after the delivery");
    }
}
