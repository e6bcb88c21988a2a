using System;

namespace NetServer.P2P;

/// <summary>One registered peer's figures on the relay (<see cref="RelayServer.TryGetPeerStatistics"/>), read at one moment.</summary>
public sealed class RelayPeerStatistics
{
    internal RelayPeerStatistics(RelayPeer peer)
    {
        Peer = peer;
    }

    /// <summary>The peer.</summary>
    public RelayPeer Peer { get; }

    /// <summary>The endpoint its connection comes from.</summary>
    public System.Net.EndPoint? RemoteEndPoint { get; internal set; }

    /// <summary>Envelopes received from it (routed, control and refused ones).</summary>
    public long MessagesReceived { get; internal set; }

    /// <summary>Copies of its envelopes delivered into other peers' queues (a message to a room counts once per member reached).</summary>
    public long MessagesRelayed { get; internal set; }

    /// <summary>Bytes of those copies (envelopes with their length prefixes).</summary>
    public long BytesRelayed { get; internal set; }

    /// <summary>Its envelopes the relay refused (each answered with a status, or counted silently when its queue was full).</summary>
    public long MessagesRefused { get; internal set; }

    /// <summary>Bytes received on its connection (TLS payload: frames of everything it sent).</summary>
    public long BytesReceived { get; internal set; }

    /// <summary>Bytes sent on its connection (everything relayed to it and the relay's own messages).</summary>
    public long BytesSent { get; internal set; }

    /// <summary>Bytes waiting in its send queue now.</summary>
    public long BytesPending { get; internal set; }

    /// <summary>Requests it has in flight to other peers, remembered by the relay until their replies pass.</summary>
    public int RequestsInFlight { get; internal set; }

    /// <summary>Rooms it is in.</summary>
    public int Rooms { get; internal set; }

    /// <summary>The peer-list version at which it joined.</summary>
    public long JoinedVersion { get; internal set; }

    /// <inheritdoc/>
    public override string ToString() =>
        FormattableString.Invariant($"{Peer}: {MessagesReceived} received, {MessagesRelayed} relayed, {MessagesRefused} refused, {BytesPending} B pending");
}
