using System;
using System.Buffers.Binary;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.IO;
using System.Threading.Tasks;
using NetServer.Protobuf.Tests.Codec;
using NetServer.Protobuf.Tests.Infrastructure;
using Xunit;

namespace NetServer.Protobuf.Tests.Sessions;

/// <summary>Envelopes through a real server over TCP, Unix sockets and TLS: split anywhere, malformed, multicast.</summary>
public sealed class EnvelopeStreamTests
{
    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Envelopes_fed_byte_by_byte_and_in_random_splits_arrive_whole_and_are_answered(TransportKind kind)
    {
        var received = new ConcurrentQueue<MessageEnvelope>();
        using var host = ProtoHost.Start(kind, (ScriptSession session, in ProtoMessage message) =>
        {
            received.Enqueue(message.ToEnvelope());
            session.ReplyBytes(message, message.Payload); // echoed from the receive buffer
        });
        await using var raw = await host.ConnectRawAsync();

        var random = new Random(kind.GetHashCode() + 5);
        var sent = new List<MessageEnvelope>();
        var stream = new MemoryStream();
        for (var i = 0; i < 60; i++)
        {
            var envelope = EnvelopeBytesTests.RandomEnvelope(random);
            envelope.RequestId = (ulong)i + 1;
            envelope.Flags = ProtoFlags.Request;
            sent.Add(envelope);
            var bytes = envelope.ToArray();
            var prefix = new byte[4];
            BinaryPrimitives.WriteInt32LittleEndian(prefix, bytes.Length);
            stream.Write(prefix);
            stream.Write(bytes);
        }

        // The first 2 KiB one byte per write, the rest in random cuts.
        var all = stream.ToArray();
        var position = 0;
        while (position < all.Length)
        {
            var cut = position < 2048 ? 1 : Math.Min(random.Next(1, 3000), all.Length - position);
            await raw.WriteAsync(all.AsMemory(position, cut));
            await raw.FlushAsync();
            position += cut;
        }

        for (var i = 0; i < sent.Count; i++)
        {
            var length = BinaryPrimitives.ReadInt32LittleEndian(await Wait.ReadExactlyAsync(raw, 4));
            var reply = ProtoMessage.Parse(await Wait.ReadExactlyAsync(raw, length)).ToEnvelope();
            Assert.True(reply.Flags == ProtoFlags.Response, $"reply {i}: flags {reply.Flags}");
            Assert.Equal(sent[i].RequestId, reply.RequestId);
            Assert.Equal(sent[i].From, reply.To);
            Assert.Equal(sent[i].To, reply.From);
            Assert.Equal(string.IsNullOrEmpty(sent[i].Header) ? null : sent[i].Header, reply.Header);
            Assert.Equal(sent[i].Payload.ToArray(), reply.Payload.ToArray());
        }

        Assert.Equal(sent.Count, received.Count);
        var index = 0;
        foreach (var got in received)
        {
            var expected = sent[index++];
            Assert.Equal(expected.Id, got.Id);
            Assert.Equal(expected.Timestamp, got.Timestamp);
            Assert.Equal(expected.Properties, got.Properties);
            Assert.Equal(expected.Payload.ToArray(), got.Payload.ToArray());
        }
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task A_malformed_envelope_closes_that_connection_with_the_reason_and_the_server_goes_on(TransportKind kind)
    {
        var closed = new TaskCompletionSource<ScriptSession>(TaskCreationOptions.RunContinuationsAsynchronously);
        var delivered = 0;
        using var host = ProtoHost.Start(
            kind,
            (ScriptSession session, in ProtoMessage message) =>
            {
                System.Threading.Interlocked.Increment(ref delivered);
                if (message.IsRequest)
                    session.Reply(message, new Sample { A = message.Unpack<Sample>().A + 1 });
            },
            (session, reason) =>
            {
                if (reason == DisconnectReason.ProtocolError)
                    closed.TrySetResult(session);
            });
        await using var raw = await host.ConnectRawAsync();

        // A valid envelope, then one whose id has 5 bytes, then a valid one that must not be delivered.
        byte[] good = new MessageEnvelope("ok").ToArray();
        byte[] bad = [0x0A, 0x05, 1, 2, 3, 4, 5];
        var frames = new MemoryStream();
        foreach (var frame in new[] { good, bad, good })
        {
            var prefix = new byte[4];
            BinaryPrimitives.WriteInt32LittleEndian(prefix, frame.Length);
            frames.Write(prefix);
            frames.Write(frame);
        }

        await raw.WriteAsync(frames.ToArray());
        await raw.FlushAsync();
        var session = await closed.Task.WaitAsync(Wait.Default);
        Assert.Equal(DisconnectReason.ProtocolError, session.Reason);
        Assert.Contains("field 1 (id) has 5 bytes; a GUID has 16", session.DisconnectException?.Message, StringComparison.Ordinal);
        Assert.Equal(0, await Wait.ReadToEndAsync(raw)); // closed, nothing sent back
        Assert.Equal(1, delivered);

        // Another connection is served as before.
        using var client = await host.ConnectAsync();
        var reply = await client.RequestAsync<Sample, Sample>(new MessageEnvelope("add"), new Sample { A = 41 }, TimeSpan.FromSeconds(10));
        Assert.Equal(42, reply.A);
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task A_multicast_envelope_reaches_every_client(TransportKind kind)
    {
        using var host = ProtoHost.Start(kind, null);
        var clients = new List<ProtoClient>();
        try
        {
            for (var i = 0; i < 3; i++)
                clients.Add(await host.ConnectAsync());
            await Wait.UntilAsync(() => host.ReadySessions == 3, () => $"3 sessions ready, {host.ReadySessions} are");

            var envelope = new MessageEnvelope("news").WithProperty("edition", "1");
            Assert.True(host.Multicast(envelope, new Sample { A = 7, Text = "hello" }));
            foreach (var client in clients)
            {
                var got = await client.ReceiveEnvelopeAsync().AsTask().WaitAsync(Wait.Default);
                Assert.Equal(envelope.Id, got.Id);
                Assert.Equal("news", got.Header);
                Assert.Equal("1", got.GetProperty("edition"));
                var payload = got.Unpack<Sample>();
                Assert.Equal(7, payload.A);
                Assert.Equal("hello", payload.Text);
            }
        }
        finally
        {
            foreach (var client in clients)
                client.Dispose();
        }
    }
}
