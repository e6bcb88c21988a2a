using System;
using System.Buffers;
using System.Net;
using System.Net.Sockets;
using NetServer.Protobuf;
using ProtoBuf;

namespace NetServer.Benchmark;

/// <summary>
/// message BenchPing { int64 sequence = 1; bytes data = 2; }: the payload of proto echo, sized
/// to exactly SIZE bytes serialized (at 32: a 3-byte sequence and 26 bytes of data, the shape of
/// the allocation test in tests/NetServer.Protobuf.Tests). Public so protobuf-net's generated
/// serializer can reach it.
/// </summary>
[ProtoContract]
public sealed class BenchPing
{
    [ProtoMember(1)]
    public long Sequence { get; set; }

    [ProtoMember(2)]
    public byte[]? Data { get; set; }
}

/// <summary>
/// What proto echo sends: one envelope, made once per process so the server role can count
/// envelopes of the same length (id, sender, addressee, header, timestamp, and a
/// <see cref="BenchPing"/> of SIZE bytes as the payload).
/// </summary>
internal static class ProtoEcho
{
    public const string Header = "bench/echo";

    /// <summary>The smallest payload a <see cref="BenchPing"/> fills exactly (a 1-byte sequence field, 1 data byte).</summary>
    public const int MinPayload = 5;

    /// <summary>A <see cref="BenchPing"/> that serializes to exactly <paramref name="size"/> bytes (at least <see cref="MinPayload"/>).</summary>
    public static BenchPing Payload(int size)
    {
        // A sequence of 3 varint bytes when that fits, as a counter in the hundred thousands would
        // be; other lengths fill the sizes where the data's length prefix grows by a byte.
        foreach (var sequenceBytes in (ReadOnlySpan<int>)[3, 1, 2, 4, 5])
        {
            var fields = 1 + sequenceBytes + 1;
            for (var data = 1; fields + VarintLength(data) + data <= size; data++)
            {
                if (fields + VarintLength(data) + data != size)
                    continue;
                var ping = new BenchPing { Sequence = 1L << (7 * (sequenceBytes - 1)), Data = new byte[data] };
                ping.Data.AsSpan().Fill((byte)'x');
                using var measured = Serializer.Measure(ping);
                if (measured.Length != size)
                    throw new InvalidOperationException($"A BenchPing made for {size} bytes serializes to {measured.Length}.");
                return ping;
            }
        }

        throw new ArgumentException($"No BenchPing serializes to exactly {size} bytes.");
    }

    /// <summary>The envelope each client sends (and, through the echoes, keeps in flight), as bytes: an envelope without its 4-byte length prefix.</summary>
    public static byte[] Envelope(int size)
    {
        var envelope = new MessageEnvelope(Header) { From = Guid.NewGuid(), To = Guid.NewGuid() };
        var writer = new ArrayBufferWriter<byte>();
        EnvelopeCodec.Write(writer, envelope, Payload(size));
        return writer.WrittenSpan.ToArray();
    }

    /// <summary>
    /// What protobuf-net itself allocates to deserialize the SIZE-byte payload (the typed echo's
    /// Unpack), in bytes per call, on this thread: the floor for the typed echo's bytes per message.
    /// </summary>
    public static double DeserializeAllocation(int size)
    {
        const int Calls = 10_000;
        using var measured = Serializer.Measure(Payload(size));
        var payload = new byte[measured.Length];
        var writer = new ArrayBufferWriter<byte>();
        measured.Serialize(writer);
        writer.WrittenSpan.CopyTo(payload);

        // Warm up first: the first calls build protobuf-net's serializer for the type.
        for (var i = 0; i < 1000; i++)
            Serializer.Deserialize<BenchPing>((ReadOnlySpan<byte>)payload);
        var before = GC.GetAllocatedBytesForCurrentThread();
        for (var i = 0; i < Calls; i++)
            Serializer.Deserialize<BenchPing>((ReadOnlySpan<byte>)payload);
        return (GC.GetAllocatedBytesForCurrentThread() - before) / (double)Calls;
    }

    private static int VarintLength(int value) => value < 1 << 7 ? 1 : value < 1 << 14 ? 2 : value < 1 << 21 ? 3 : value < 1 << 28 ? 4 : 5;
}

/// <summary>
/// A <see cref="ProtoClient"/> (TCP, TLS or Unix socket, by constructor) for proto echo. Every
/// envelope it receives has been parsed and checked in place by the package before
/// <see cref="OnMessage(in ProtoMessage)"/>; the client counts it and sends it back as it came
/// (its bytes, <c>message.Raw</c>), so it decodes nothing into objects in either mode.
/// </summary>
internal sealed class BenchProtoClient : ProtoClient
{
    private readonly MessageBehavior _behavior;

    public BenchProtoClient(IPEndPoint endpoint, MessageBehavior behavior)
        : base(endpoint) => _behavior = Configure(behavior);

    public BenchProtoClient(SslContext context, IPEndPoint endpoint, MessageBehavior behavior)
        : base(context, endpoint) => _behavior = Configure(behavior);

    public BenchProtoClient(UnixDomainSocketEndPoint endpoint, MessageBehavior behavior)
        : base(endpoint) => _behavior = Configure(behavior);

    protected override void OnConnected()
    {
        base.OnConnected();
        _behavior.Connected(this);
    }

    protected override void OnMessage(in ProtoMessage message) => _behavior.Received(this, message.Raw);

    protected override void OnDisconnected(DisconnectReason reason)
    {
        base.OnDisconnected(reason);
        _behavior.Disconnected(reason, Connection?.DisconnectException);
    }

    private MessageBehavior Configure(MessageBehavior behavior)
    {
        MessagePeers.SetNoDelay(this);
        return behavior;
    }
}

/// <summary>A <see cref="ProtoServer"/> whose sessions echo every envelope (see <see cref="BenchProtoSession"/>).</summary>
internal sealed class BenchProtoServer : ProtoServer
{
    private readonly bool _typed;
    private readonly ServerCounters _counters;

    public BenchProtoServer(EndPoint endpoint, bool typed, ServerCounters counters)
        : base(endpoint) => (_typed, _counters) = (typed, counters);

    public BenchProtoServer(SslContext context, IPEndPoint endpoint, bool typed, ServerCounters counters)
        : base(context, endpoint) => (_typed, _counters) = (typed, counters);

    protected override ProtoSession CreateProtoSession() => new BenchProtoSession(this, _typed, _counters);

    protected override void OnError(SocketError error) => _counters.AddError(error);
}

/// <summary>
/// The server side of proto echo. Either way the package has parsed and checked the envelope in
/// place before <see cref="OnMessage(in ProtoMessage)"/>. By default the session sends it back as
/// it came (its bytes: what a broker that routes envelopes does). Typed, it unpacks the payload as
/// a <see cref="BenchPing"/> and sends that back in a reply envelope of its own (sender and
/// addressee swapped), measured and serialized by protobuf-net straight into the send memory:
/// the whole decode and encode path of an application's handler.
/// </summary>
internal sealed class BenchProtoSession(ProtoServer server, bool typed, ServerCounters counters) : ProtoSession(server)
{
    // One reply envelope per session, changed and sent again: an envelope is read when it is sent.
    private readonly MessageEnvelope _reply = new() { Header = ProtoEcho.Header };

    protected override void OnConnected()
    {
        base.OnConnected();
        MessagePeers.SetNoDelay(this);
        counters.AddEstablished();
    }

    protected override void OnMessage(in ProtoMessage message)
    {
        if (!typed)
        {
            SendAsync(message.Raw);
            return;
        }

        _reply.Id = message.Id;
        _reply.From = message.To;
        _reply.To = message.From;
        _reply.Timestamp = message.Timestamp;
        SendAsync(_reply, message.Unpack<BenchPing>());
    }

    protected override void OnDisconnected(DisconnectReason reason)
    {
        base.OnDisconnected(reason);
        MessagePeers.SessionEnded(counters, reason, Connection?.DisconnectException);
    }
}
