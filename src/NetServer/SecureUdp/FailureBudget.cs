namespace NetServer.SecureUdp;

/// <summary>
/// A token bucket of authentication failures (GCRA, lock-free): <see cref="IsSpent"/> looks before
/// the AEAD runs, <see cref="Spend"/> takes one token after a tag failed. Once spent, datagrams
/// are dropped unopened until tokens come back, so forged datagrams cost at most the budget's rate
/// of exceptions (the platform reports a bad tag only by throwing).
/// </summary>
internal sealed class FailureBudget(long perSecond, long burst)
{
    // Time is scaled so that one failure costs 1000 units and a millisecond refills perSecond units.
    private const long Cost = 1000;
    private readonly long _tolerance = Math.Max(1, burst) * Cost;
    private readonly long _perSecond = Math.Max(1, perSecond);
    private long _theoreticalArrival; // 0: a full bucket for any clock reading of 0 or more

    /// <summary>Whether one more failure would exceed the budget at <paramref name="now"/> (milliseconds).</summary>
    public bool IsSpent(long now) => Interlocked.Read(ref _theoreticalArrival) - now * _perSecond > _tolerance - Cost;

    /// <summary>Takes one token for a failure at <paramref name="now"/>.</summary>
    public void Spend(long now)
    {
        var scaled = now * _perSecond;
        while (true)
        {
            var seen = Interlocked.Read(ref _theoreticalArrival);
            var next = Math.Max(seen, scaled) + Cost;
            if (Interlocked.CompareExchange(ref _theoreticalArrival, next, seen) == seen)
                return;
        }
    }
}
