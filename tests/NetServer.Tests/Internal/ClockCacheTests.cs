using System;
using System.Linq;
using NetServer.Internal;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Internal;

/// <summary>
/// The bounded cache behind the UDP endpoint caches: it never holds more than its capacity, a
/// full cache forgets one entry per entry added (not everything at once), and keys in steady use
/// survive a flood of new ones.
/// </summary>
public class ClockCacheTests
{
    [Fact]
    public void A_flood_of_new_keys_keeps_the_cache_at_its_bound()
    {
        var cache = new ClockCache<int, int>(1000);
        for (var key = 0; key < 100_000; key++)
        {
            if (!cache.TryGetValue(key, out _))
                cache.Add(key, key * 2);
            Assert.True(cache.Count <= cache.Capacity);
        }

        Assert.Equal(1000, cache.Count);
        Assert.True(cache.TryGetValue(99_999, out var value));
        Assert.Equal(199_998, value);
    }

    [Fact]
    public void A_full_cache_forgets_one_entry_per_entry_added()
    {
        var cache = new ClockCache<int, int>(100);
        for (var key = 0; key < 100; key++)
            cache.Add(key, key);
        cache.Add(100, 100);
        Assert.Equal(100, cache.Count);
        Assert.Equal(99, Enumerable.Range(0, 100).Count(key => cache.TryGetValue(key, out _)));
    }

    [Fact]
    public void Keys_in_steady_use_survive_a_flood_of_new_ones()
    {
        const int capacity = 1000;
        const int steady = 500;
        var cache = new ClockCache<int, int>(capacity);
        var next = steady;
        var misses = 0;
        for (var round = 0; round < 200; round++)
        {
            for (var key = 0; key < steady; key++)
            {
                if (cache.TryGetValue(key, out _))
                    continue;
                if (round > 0)
                    misses++;
                cache.Add(key, key);
            }

            // Between two rounds of the steady keys, 400 keys seen once.
            for (var i = 0; i < 400; i++, next++)
                cache.Add(next, next);
        }

        Assert.Equal(0, misses);
        Assert.Equal(capacity, cache.Count);
    }

    [Fact]
    public void Hits_and_replacements_allocate_nothing_once_the_cache_is_full()
    {
        var cache = new ClockCache<int, int>(1024);
        var key = 0;
        for (; key < 2048; key++)
            cache.Add(key, key);

        // The fewest bytes over up to 5 windows: a per-operation allocation shows in every window,
        // while the runtime's own one-off work on this thread (a method compiled again) does not.
        // Every round adds a key not seen before, so each one replaces an entry of the full cache.
        var fewest = Allocations.Least(() =>
        {
            cache.Add(key, key);
            Assert.True(cache.TryGetValue(key, out _));
            key++;
        }, roundsPerWindow: 4000, windows: 5);

        Assert.True(fewest == 0, $"The fewest bytes allocated by a window of 4,000 replacements: {fewest}");
    }

    [Fact]
    public void A_cache_holds_at_least_one_entry() =>
        Assert.Throws<ArgumentOutOfRangeException>(() => new ClockCache<int, int>(0));
}
