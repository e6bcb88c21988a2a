namespace NetServer.P2P.Internal;

/// <summary>
/// A token bucket of one second's worth: <c>rate</c> tokens a second, at most <c>rate</c> held.
/// Kept in thousandths of a token so a millisecond of refill is exact in integers. Not
/// thread-safe: one peer's bucket is used only by its own receive hook, which never runs
/// concurrently with itself.
/// </summary>
internal struct TokenBucket
{
    private readonly long _rate; // tokens per second; 0: no limit
    private long _milliTokens; // thousandths of a token held
    private long _last;        // milliseconds of the last refill

    public TokenBucket(long ratePerSecond, long now)
    {
        _rate = ratePerSecond;
        _milliTokens = ratePerSecond * 1000;
        _last = now;
    }

    /// <summary>Takes <paramref name="count"/> tokens if the bucket holds them (refilled to <paramref name="now"/> first); false leaves it as it was.</summary>
    public bool TryTake(long count, long now)
    {
        if (_rate == 0)
            return true;
        var elapsed = now - _last;
        if (elapsed > 0)
        {
            _last = now;
            var capacity = _rate * 1000;

            // rate tokens a second are rate thousandths a millisecond; the cap keeps an idle peer to one second's burst.
            _milliTokens = elapsed >= 1000 ? capacity : System.Math.Min(capacity, _milliTokens + elapsed * _rate);
        }

        var needed = count * 1000;
        if (_milliTokens < needed)
            return false;
        _milliTokens -= needed;
        return true;
    }

    /// <summary>Gives back <paramref name="count"/> tokens taken by a charge that did not go through (the other bucket was short).</summary>
    public void Refund(long count)
    {
        if (_rate != 0)
            _milliTokens = System.Math.Min(_rate * 1000, _milliTokens + count * 1000);
    }
}
