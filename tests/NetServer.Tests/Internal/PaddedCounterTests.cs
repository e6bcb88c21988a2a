using System;
using System.Linq;
using System.Runtime.CompilerServices;
using System.Threading.Tasks;
using NetServer.Internal;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Internal;

/// <summary>The statistics counter on a cache line of its own: apart from its neighbours, and still exact.</summary>
public class PaddedCounterTests
{
    private sealed class TwoCounters
    {
        public PaddedCounter First;
        public PaddedCounter Second;
    }

    [Fact]
    public void The_value_has_a_line_to_itself_and_counters_side_by_side_are_two_lines_apart()
    {
        var holder = new TwoCounters();
        holder.First.Add(5);

        // 64 bytes before the value and 56 after it, inside the counter's own 128 bytes.
        Assert.Equal(128, Unsafe.SizeOf<PaddedCounter>());
        ref var start = ref Unsafe.As<PaddedCounter, byte>(ref holder.First);
        Assert.Equal(5, Unsafe.ReadUnaligned<long>(ref Unsafe.Add(ref start, 64)));
        Assert.Equal(128, Math.Abs((long)Unsafe.ByteOffset(ref holder.First, ref holder.Second)));
    }

    [Fact]
    public async Task Updates_from_many_threads_at_once_are_exact()
    {
        const int threads = 4;
        const int updates = 250_000;
        var holder = new TwoCounters();
        await Task.WhenAll(Enumerable.Range(0, threads).Select(_ => Task.Run(() =>
        {
            for (var i = 0; i < updates; i++)
            {
                holder.First.Add(3);
                holder.Second.Increment();
            }
        }))).WaitAsync(Wait.Default);

        Assert.Equal(3L * threads * updates, holder.First.Read());
        Assert.Equal((long)threads * updates, holder.Second.Read());
        holder.Second.Decrement();
        Assert.Equal(((long)threads * updates) - 1, holder.Second.Read());
        holder.First.Reset();
        Assert.Equal(0, holder.First.Read());
    }
}
