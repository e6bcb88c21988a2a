using System;
using System.Threading;
using Xunit;

namespace NetServer.Tests.Http;

public sealed class HttpLimitsTests
{
    [Fact]
    public void Defaults_are_Kestrels()
    {
        var limits = new HttpLimits();

        Assert.Equal(8192, limits.MaxRequestLineSize);
        Assert.Equal(32768, limits.MaxRequestHeadersTotalSize);
        Assert.Equal(100, limits.MaxRequestHeaderCount);
        Assert.Equal(30_000_000, limits.MaxRequestBodySize);
        Assert.Equal(TimeSpan.FromSeconds(30), limits.RequestHeadersTimeout);
        Assert.Equal(TimeSpan.FromSeconds(130), limits.KeepAliveTimeout);
        Assert.Equal(240, limits.MinRequestBodyDataRate);
        Assert.Equal(TimeSpan.FromSeconds(5), limits.MinRequestBodyDataRateGracePeriod);
        Assert.Equal(16, limits.MaxPipelinedRequests);
        Assert.Equal(65536, limits.MaxResponseHeadersTotalSize);
        Assert.False(limits.RelaxHostCheck);
    }

    [Fact]
    public void Sizes_and_counts_must_be_positive()
    {
        var limits = new HttpLimits();

        Assert.Throws<ArgumentOutOfRangeException>(() => limits.MaxRequestLineSize = 0);
        Assert.Throws<ArgumentOutOfRangeException>(() => limits.MaxRequestHeadersTotalSize = -1);
        Assert.Throws<ArgumentOutOfRangeException>(() => limits.MaxRequestHeaderCount = 0);
        Assert.Throws<ArgumentOutOfRangeException>(() => limits.MaxPipelinedRequests = 0);
        Assert.Throws<ArgumentOutOfRangeException>(() => limits.MaxResponseHeadersTotalSize = 0);
        Assert.Throws<ArgumentOutOfRangeException>(() => limits.MaxRequestBodySize = -1);
        Assert.Equal(8192, limits.MaxRequestLineSize);

        limits.MaxRequestBodySize = null;
        limits.MaxRequestBodySize = 0;
        limits.MaxRequestLineSize = 1;
        Assert.Equal(0, limits.MaxRequestBodySize);
        Assert.Equal(1, limits.MaxRequestLineSize);
    }

    [Fact]
    public void Timeouts_must_be_positive_or_infinite()
    {
        var limits = new HttpLimits();

        Assert.Throws<ArgumentOutOfRangeException>(() => limits.RequestHeadersTimeout = TimeSpan.Zero);
        Assert.Throws<ArgumentOutOfRangeException>(() => limits.KeepAliveTimeout = TimeSpan.FromSeconds(-2));
        Assert.Throws<ArgumentOutOfRangeException>(() => limits.MinRequestBodyDataRateGracePeriod = TimeSpan.Zero);
        limits.KeepAliveTimeout = Timeout.InfiniteTimeSpan;
        limits.RequestHeadersTimeout = TimeSpan.FromMilliseconds(1);
        Assert.Equal(Timeout.InfiniteTimeSpan, limits.KeepAliveTimeout);
    }

    [Fact]
    public void The_body_data_rate_must_be_a_positive_number_or_null()
    {
        var limits = new HttpLimits();

        Assert.Throws<ArgumentOutOfRangeException>(() => limits.MinRequestBodyDataRate = 0);
        Assert.Throws<ArgumentOutOfRangeException>(() => limits.MinRequestBodyDataRate = double.NaN);
        Assert.Throws<ArgumentOutOfRangeException>(() => limits.MinRequestBodyDataRate = double.PositiveInfinity);
        limits.MinRequestBodyDataRate = null;
        Assert.Null(limits.MinRequestBodyDataRate);
    }
}
