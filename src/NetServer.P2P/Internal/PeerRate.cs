namespace NetServer.P2P.Internal;

/// <summary>
/// What a sender may have relayed a second (<see cref="RelayServerOptions.PeerMessageRate"/> and
/// <see cref="RelayServerOptions.PeerByteRate"/>): two buckets charged together. Not thread-safe,
/// as <see cref="TokenBucket"/>: each is charged by one reader at a time. A struct kept in a field
/// and charged in place.
/// </summary>
internal struct PeerRate
{
    private TokenBucket _messages;
    private TokenBucket _bytes;

    public PeerRate(RelayServerOptions limits, long now)
    {
        _messages = new TokenBucket(limits.PeerMessageRate, now);
        _bytes = new TokenBucket(limits.PeerByteRate, now);
    }

    /// <summary>Charges <paramref name="copies"/> messages of <paramref name="envelopeBytes"/> each; false (nothing taken) when either bucket is short.</summary>
    public bool TryCharge(long copies, long envelopeBytes, long now)
    {
        if (!_messages.TryTake(copies, now))
            return false;
        if (_bytes.TryTake(copies * envelopeBytes, now))
            return true;
        _messages.Refund(copies);
        return false;
    }
}
