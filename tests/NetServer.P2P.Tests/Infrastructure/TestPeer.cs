using System;
using System.Collections.Concurrent;
using System.Net;
using System.Threading;
using NetServer.Protobuf;
using NetServer.Tests.Infrastructure;

namespace NetServer.P2P.Tests.Infrastructure;

/// <summary>What a test wants to do with a message a peer received (valid only during the call).</summary>
public delegate void PeerMessageHandler(TestPeer peer, in ProtoMessage message);

/// <summary>A <see cref="RelayClient"/> that records what its hooks saw, for assertions.</summary>
public class TestPeer(EndPoint relay) : RelayClient(TestCertificates.ClientContext(), relay)
{
    private int _joined;
    private int _left;
    private int _synchronized;
    private int _received;

    public PeerMessageHandler? Handler { get; set; }

    public ConcurrentQueue<MessageEnvelope> Messages { get; } = new();

    public ConcurrentQueue<RelayDeliveryFailure> Failures { get; } = new();

    public ConcurrentQueue<Guid> JoinedIds { get; } = new();

    /// <summary>Every datagram received: the sender, the payload, the path it came by.</summary>
    public ConcurrentQueue<(Guid From, byte[] Payload, RelayPath Path)> Datagrams { get; } = new();

    /// <summary>Every <see cref="RelayClient.OnPathChanged"/>.</summary>
    public ConcurrentQueue<(Guid Peer, RelayPath Path)> PathChanges { get; } = new();

    public ConcurrentQueue<Guid> LeftIds { get; } = new();

    /// <summary>Keep a copy of every message in <see cref="Messages"/> (tests that count millions turn it off).</summary>
    public bool KeepMessages { get; set; } = true;

    public int Joined => Volatile.Read(ref _joined);

    public int Left => Volatile.Read(ref _left);

    public int Synchronizations => Volatile.Read(ref _synchronized);

    public int Received => Volatile.Read(ref _received);

    public DisconnectReason? Reason { get; private set; }

    /// <summary>The transport under the client (to pause its reading in a test).</summary>
    public StreamClient Transport => ConnectionForTests.Transport;

    protected override void OnPeerJoined(RelayPeer peer)
    {
        JoinedIds.Enqueue(peer.Id);
        Interlocked.Increment(ref _joined);
    }

    protected override void OnPeerLeft(RelayPeer peer)
    {
        LeftIds.Enqueue(peer.Id);
        Interlocked.Increment(ref _left);
    }

    protected override void OnPeersSynchronized(long version) => Interlocked.Increment(ref _synchronized);

    protected override void OnMessage(in ProtoMessage message)
    {
        Handler?.Invoke(this, in message);
        if (KeepMessages)
            Messages.Enqueue(message.ToEnvelope());
        Interlocked.Increment(ref _received);
    }

    protected override void OnDatagram(Guid peer, ReadOnlySpan<byte> payload, RelayPath path) => Datagrams.Enqueue((peer, payload.ToArray(), path));

    protected override void OnPathChanged(Guid peer, RelayPath path) => PathChanges.Enqueue((peer, path));

    protected override void OnDeliveryFailed(RelayDeliveryFailure failure) => Failures.Enqueue(failure);

    protected override void OnDisconnected(DisconnectReason reason) => Reason = reason;
}
