using System;
using System.Threading.Tasks;
using Xunit;

namespace NetServer.P2P.Tests.Infrastructure;

/// <summary>Bounded waits, so a broken build fails in seconds instead of hanging.</summary>
public static class Wait
{
    public static readonly TimeSpan Default = TimeSpan.FromSeconds(15);

    /// <summary>Polls an asynchronous <paramref name="condition"/> every 5 ms until it holds (bounded).</summary>
    public static async Task UntilAsync(Func<Task<bool>> condition, Func<string> what, TimeSpan? timeout = null)
    {
        var limit = DateTime.UtcNow + (timeout ?? Default);
        while (!await condition())
        {
            if (DateTime.UtcNow > limit)
                Assert.Fail($"Timed out waiting for: {what()}");
            await Task.Delay(5);
        }
    }

    /// <summary>Polls <paramref name="condition"/> every 5 ms until it holds; fails the test with <paramref name="what"/> after the timeout.</summary>
    public static async Task UntilAsync(Func<bool> condition, Func<string> what, TimeSpan? timeout = null)
    {
        var limit = DateTime.UtcNow + (timeout ?? Default);
        while (!condition())
        {
            if (DateTime.UtcNow > limit)
                Assert.Fail($"Timed out waiting for: {what()}");
            await Task.Delay(5);
        }
    }
}
