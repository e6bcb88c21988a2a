using System;
using System.Collections.Generic;
using NetServer.SecureUdp;
using Xunit;

namespace NetServer.Tests.SecureUdp;

/// <summary>
/// The replay window alone (RFC 6479): new counters in any order within the window are accepted
/// once, a second time refused as replays, counters left of the window as too old; Check never
/// changes anything; and, against a plain set of every counter seen (the model), the same answers
/// for long random sequences with reordering, duplicates and jumps.
/// </summary>
public class ReplayWindowTests
{
    private const int Size = SecureUdpConstants.ReplayWindowSize;

    [Fact]
    public void Counters_are_accepted_once_in_order_and_out_of_order()
    {
        var window = new ReplayWindow();
        foreach (var counter in new ulong[] { 0, 1, 2, 5, 4, 3, 100, 50, 99 })
            Assert.True(window.Accept(counter), $"counter {counter}");
        foreach (var counter in new ulong[] { 0, 1, 2, 3, 4, 5, 50, 99, 100 })
        {
            Assert.Equal(SecureDatagramStatus.Replay, window.Check(counter));
            Assert.False(window.Accept(counter));
        }

        Assert.Equal(SecureDatagramStatus.Ok, window.Check(6));
        Assert.Equal(SecureDatagramStatus.Ok, window.Check(101));
    }

    [Fact]
    public void The_first_counter_may_be_anywhere_and_counter_zero_is_a_real_counter()
    {
        var window = new ReplayWindow();
        Assert.True(window.Accept(0));
        Assert.Equal(SecureDatagramStatus.Replay, window.Check(0));

        var late = new ReplayWindow();
        Assert.True(late.Accept(1_000_000));
        Assert.Equal(SecureDatagramStatus.Ok, late.Check(1_000_000 - 1));
        Assert.Equal(SecureDatagramStatus.TooOld, late.Check(1_000_000 - Size));
    }

    [Fact]
    public void Left_of_the_window_is_too_old_and_the_edge_is_exact()
    {
        var window = new ReplayWindow();
        Assert.True(window.Accept(10_000));
        Assert.Equal(SecureDatagramStatus.Ok, window.Check(10_000 - Size + 1));
        Assert.Equal(SecureDatagramStatus.TooOld, window.Check(10_000 - Size));
        Assert.Equal(SecureDatagramStatus.TooOld, window.Check(0));
        Assert.False(window.Accept(0));
        Assert.True(window.Accept(10_000 - Size + 1));
        Assert.Equal(SecureDatagramStatus.Replay, window.Check(10_000 - Size + 1));
    }

    [Fact]
    public void Check_changes_nothing()
    {
        var window = new ReplayWindow();
        Assert.True(window.Accept(5));
        for (var i = 0; i < 3; i++)
        {
            Assert.Equal(SecureDatagramStatus.Ok, window.Check(1_000_000)); // far ahead: only Accept moves the window
            Assert.Equal(SecureDatagramStatus.Ok, window.Check(4));
            Assert.Equal(SecureDatagramStatus.Replay, window.Check(5));
        }

        Assert.True(window.Accept(4));
    }

    [Fact]
    public void A_jump_forward_clears_the_bits_it_slides_over()
    {
        var window = new ReplayWindow();
        for (ulong c = 0; c < 200; c++)
            Assert.True(window.Accept(c));

        // Exactly one ring's worth ahead: every block reused must read as unseen.
        var jump = (ulong)(SecureUdpConstants.ReplayRingBlocks * 64) + 150;
        Assert.True(window.Accept(jump));
        for (var c = jump - (ulong)Size + 1; c < jump; c++)
            Assert.Equal(SecureDatagramStatus.Ok, window.Check(c));
        Assert.Equal(SecureDatagramStatus.TooOld, window.Check(150));
    }

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    [InlineData(4)]
    public void Random_sequences_agree_with_a_set_of_every_counter_seen(int seed)
    {
        var random = new Random(seed);
        var window = new ReplayWindow();
        var seen = new HashSet<ulong>();
        ulong highest = 0;
        var any = false;
        ulong next = 0;
        for (var i = 0; i < 200_000; i++)
        {
            // Mostly forward with reordering, sometimes duplicates of recent counters, sometimes jumps.
            ulong counter;
            var roll = random.Next(100);
            if (roll < 70)
                counter = next++;
            else if (roll < 85)
                counter = next - (ulong)Math.Min((long)next, random.Next(Size + 200));
            else if (roll < 97)
                counter = next + (ulong)random.Next(50);
            else
                counter = next += (ulong)random.Next(20_000);

            var expected = any && highest >= counter && highest - counter >= Size
                ? SecureDatagramStatus.TooOld
                : seen.Contains(counter) ? SecureDatagramStatus.Replay : SecureDatagramStatus.Ok;
            Assert.Equal(expected, window.Check(counter));
            Assert.Equal(expected == SecureDatagramStatus.Ok, window.Accept(counter));
            if (expected == SecureDatagramStatus.Ok)
            {
                seen.Add(counter);
                highest = any ? Math.Max(highest, counter) : counter;
                any = true;
            }
        }
    }
}
