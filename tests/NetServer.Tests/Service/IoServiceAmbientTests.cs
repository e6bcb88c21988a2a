using System;
using Xunit;

namespace NetServer.Tests.Service;

/// <summary>The shared service's loop count from NETSERVER_LOOPS.</summary>
public sealed class IoServiceAmbientTests
{
    [Theory]
    [InlineData("1", 1)]
    [InlineData("3", 3)]
    [InlineData("1024", 1024)]
    public void A_number_from_1_to_1024_sets_the_loops(string value, int expected) =>
        Assert.Equal(expected, IoService.AmbientThreads(value));

    [Theory]
    [InlineData(null)]
    [InlineData("")]
    [InlineData("0")]
    [InlineData("1025")]
    [InlineData("-2")]
    [InlineData(" 2")]
    [InlineData("two")]
    public void Anything_else_means_one_loop_per_processor(string? value) =>
        Assert.Equal(Environment.ProcessorCount, IoService.AmbientThreads(value));
}
