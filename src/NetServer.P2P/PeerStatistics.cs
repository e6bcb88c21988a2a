using System;

namespace NetServer.P2P;

/// <summary>What a <see cref="RelayClient"/> exchanged with one peer (<see cref="RelayClient.GetStatistics"/>), read at one moment.</summary>
public sealed class PeerStatistics
{
    internal PeerStatistics(Guid peerId)
    {
        PeerId = peerId;
    }

    /// <summary>The peer.</summary>
    public Guid PeerId { get; }

    /// <summary>How messages reach it.</summary>
    public RelayPath Path { get; internal set; }

    /// <summary>Envelopes sent to it (requests and replies included).</summary>
    public long MessagesSent { get; internal set; }

    /// <summary>Bytes of those envelopes (with their length prefixes).</summary>
    public long BytesSent { get; internal set; }

    /// <summary>Envelopes received from it (replies to this client's requests included).</summary>
    public long MessagesReceived { get; internal set; }

    /// <summary>Bytes of those envelopes (without length prefixes).</summary>
    public long BytesReceived { get; internal set; }

    /// <summary>Requests sent to it.</summary>
    public long RequestsSent { get; internal set; }

    /// <summary>Requests to it that ended without a reply (timeout, cancel, refusal, departure, disconnect).</summary>
    public long RequestsFailed { get; internal set; }

    /// <summary>The round-trip time of the last <see cref="RelayClient.PingAsync"/> through the relay (null before one).</summary>
    public TimeSpan? LastRoundTrip { get; internal set; }

    /// <summary>The smoothed round-trip time (RFC 6298: 7/8 of the previous plus 1/8 of the new sample; null before one).</summary>
    public TimeSpan? SmoothedRoundTrip { get; internal set; }

    /// <summary>Payload bytes of UDP datagrams sent straight to the peer (after a punch).</summary>
    public long DatagramBytesSentDirect { get; internal set; }

    /// <summary>Payload bytes of UDP datagrams received straight from the peer.</summary>
    public long DatagramBytesReceivedDirect { get; internal set; }

    /// <summary>Payload bytes of datagrams sent through the relay (by UDP, or over TLS when UDP is blocked).</summary>
    public long DatagramBytesSentRelayed { get; internal set; }

    /// <summary>Payload bytes of datagrams received through the relay.</summary>
    public long DatagramBytesReceivedRelayed { get; internal set; }

    /// <summary>Punch attempts made with the peer (<see cref="RelayClient.ConnectDirectAsync"/>; each up to three tries).</summary>
    public long PunchAttempts { get; internal set; }

    /// <summary>Punch attempts that ended <see cref="RelayPath.Direct"/>.</summary>
    public long PunchSuccesses { get; internal set; }

    /// <summary>Datagrams with the pair's index that failed authentication (forged or corrupted), dropped.</summary>
    public long AuthenticationFailures { get; internal set; }

    /// <summary>Datagrams of the pair dropped as replays (or too old).</summary>
    public long ReplaysDropped { get; internal set; }

    /// <inheritdoc/>
    public override string ToString() => FormattableString.Invariant(
        $"{PeerId} ({Path}): {MessagesSent} sent, {MessagesReceived} received, rtt {(SmoothedRoundTrip is { } rtt ? $"{rtt.TotalMilliseconds:0.###} ms" : "unknown")}");
}
