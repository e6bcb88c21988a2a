using NetServer.P2P.Internal;
using Xunit;

namespace NetServer.P2P.Tests.Wire;

/// <summary>The per-peer rate: one second's worth of tokens, refilled by the millisecond, never more than one second's burst.</summary>
public sealed class TokenBucketTests
{
    [Fact]
    public void A_full_bucket_gives_one_seconds_worth_then_refills_by_the_millisecond()
    {
        var bucket = new TokenBucket(1000, now: 0);
        Assert.True(bucket.TryTake(1000, now: 0));
        Assert.False(bucket.TryTake(1, now: 0));
        Assert.True(bucket.TryTake(1, now: 1));    // 1 ms: one token
        Assert.False(bucket.TryTake(1, now: 1));
        Assert.True(bucket.TryTake(500, now: 501));
        Assert.False(bucket.TryTake(1, now: 501));
    }

    [Fact]
    public void An_idle_bucket_holds_one_second_at_most()
    {
        var bucket = new TokenBucket(100, now: 0);
        Assert.True(bucket.TryTake(100, now: 10_000));
        Assert.False(bucket.TryTake(1, now: 10_000)); // ten idle seconds did not save ten seconds' worth
    }

    [Fact]
    public void A_refused_take_takes_nothing_and_a_refund_gives_back()
    {
        var bucket = new TokenBucket(10, now: 0);
        Assert.False(bucket.TryTake(11, now: 0));
        Assert.True(bucket.TryTake(10, now: 0));
        bucket.Refund(4);
        Assert.True(bucket.TryTake(4, now: 0));
        Assert.False(bucket.TryTake(1, now: 0));
    }

    [Fact]
    public void Rate_zero_is_no_limit()
    {
        var bucket = new TokenBucket(0, now: 0);
        Assert.True(bucket.TryTake(long.MaxValue / 2000, now: 0));
    }
}
