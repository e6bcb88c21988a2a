using System;
using System.Threading;

namespace NetServer.P2P.Client;

/// <summary>
/// What a client keeps per peer it knows: its counters, its round-trip times, and a token that
/// fires when the peer leaves, so the requests waiting for its replies fail at once.
/// </summary>
[System.Diagnostics.CodeAnalysis.SuppressMessage("Design", "CA1001", Justification = "The token source has no timer: nothing to free, and a request may still link to its token after the peer left.")]
internal sealed class PeerLink(Guid id)
{
    private readonly object _lock = new();
    private readonly CancellationTokenSource _departed = new();
    private long _messagesSent;
    private long _bytesSent;
    private long _messagesReceived;
    private long _bytesReceived;
    private long _requestsSent;
    private long _requestsFailed;
    private TimeSpan? _lastRoundTrip;
    private TimeSpan? _smoothedRoundTrip;

    public Guid Id { get; } = id;

    /// <summary>How envelopes reach the peer: always through the relay (the datagram path is the pair's, <see cref="PeerUdp"/>).</summary>
    public RelayPath Path { get; } = RelayPath.Relayed;

    /// <summary>Fires when the peer leaves.</summary>
    public CancellationToken Departed => _departed.Token;

    public void CountSent(long bytes)
    {
        Interlocked.Increment(ref _messagesSent);
        Interlocked.Add(ref _bytesSent, bytes);
    }

    public void CountReceived(long bytes)
    {
        Interlocked.Increment(ref _messagesReceived);
        Interlocked.Add(ref _bytesReceived, bytes);
    }

    public void CountRequest() => Interlocked.Increment(ref _requestsSent);

    public void CountFailedRequest() => Interlocked.Increment(ref _requestsFailed);

    public void RecordRoundTrip(TimeSpan sample)
    {
        lock (_lock)
        {
            _lastRoundTrip = sample;
            _smoothedRoundTrip = _smoothedRoundTrip is { } smoothed ? TimeSpan.FromTicks((smoothed.Ticks * 7 + sample.Ticks) / 8) : sample;
        }
    }

    /// <summary>The peer left: requests waiting for it fail (from the receive hook that saw the departure).</summary>
    public void Depart() => _departed.Cancel();

    public PeerStatistics Statistics()
    {
        lock (_lock)
        {
            return new PeerStatistics(Id)
            {
                Path = Path,
                MessagesSent = Interlocked.Read(ref _messagesSent),
                BytesSent = Interlocked.Read(ref _bytesSent),
                MessagesReceived = Interlocked.Read(ref _messagesReceived),
                BytesReceived = Interlocked.Read(ref _bytesReceived),
                RequestsSent = Interlocked.Read(ref _requestsSent),
                RequestsFailed = Interlocked.Read(ref _requestsFailed),
                LastRoundTrip = _lastRoundTrip,
                SmoothedRoundTrip = _smoothedRoundTrip,
            };
        }
    }
}
