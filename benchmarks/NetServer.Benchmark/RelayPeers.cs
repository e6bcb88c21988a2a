using System;
using System.Buffers;
using System.Net;
using System.Threading;
using NetServer.P2P;
using NetServer.Protobuf;

namespace NetServer.Benchmark;

/// <summary>
/// A peer of relay forward: it holds one envelope, made once, addressed to its partner (header
/// bench/relay, a BenchPing of SIZE bytes), and sends it as it is (<see cref="RelayClient.SendEncoded"/>)
/// for every envelope it receives, after checking the relay stamped the partner as the sender. So
/// the peers decode nothing into objects, as proto echo's client, and the relay's work per message
/// is what is measured.
/// </summary>
internal sealed class BenchRelayPeer(SslContext context, EndPoint relay) : RelayClient(context, relay)
{
    private byte[] _envelope = [];
    private Guid _partner;
    private long _received;
    private long _errors;
    private volatile bool _stopped;

    public long Received => Volatile.Read(ref _received);

    public long Errors => Volatile.Read(ref _errors);

    /// <summary>Makes the envelope this peer sends: to <paramref name="partner"/>, with a <paramref name="size"/>-byte payload.</summary>
    public void Pair(Guid partner, int size)
    {
        _partner = partner;
        var envelope = new MessageEnvelope("bench/relay") { From = PeerId, To = partner };
        var writer = new ArrayBufferWriter<byte>();
        EnvelopeCodec.Write(writer, envelope, ProtoEcho.Payload(size));
        _envelope = writer.WrittenSpan.ToArray();
    }

    /// <summary>Puts <paramref name="messages"/> envelopes in flight to the partner.</summary>
    public void Start(int messages)
    {
        for (var i = 0; i < messages; i++)
        {
            if (!SendEncoded(_envelope))
                Interlocked.Increment(ref _errors);
        }
    }

    /// <summary>The run is over: what still arrives is not sent back, and refusals (partners already gone) are not errors.</summary>
    public void StopSending() => _stopped = true;

    protected override void OnMessage(in ProtoMessage message)
    {
        if (_stopped)
            return;
        Volatile.Write(ref _received, _received + 1);
        if (message.From != _partner)
            Interlocked.Increment(ref _errors);
        if (!SendEncoded(_envelope))
            Interlocked.Increment(ref _errors);
    }

    protected override void OnDeliveryFailed(RelayDeliveryFailure failure)
    {
        if (_stopped)
            return;
        ErrorText.Print($"The relay refused a message: {failure}");
        Interlocked.Increment(ref _errors);
    }

    protected override void OnDisconnected(DisconnectReason reason)
    {
        if (!_stopped && reason is not (DisconnectReason.LocalDisconnect or DisconnectReason.Disposed))
        {
            ErrorText.Print($"A peer's connection to the relay closed: {reason}");
            Interlocked.Increment(ref _errors);
        }
    }
}
