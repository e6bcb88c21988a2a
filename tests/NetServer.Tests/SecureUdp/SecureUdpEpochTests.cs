using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Linq;
using System.Threading.Tasks;
using NetServer.SecureUdp;
using Xunit;
using static NetServer.Tests.SecureUdp.SecureSessions;

namespace NetServer.Tests.SecureUdp;

/// <summary>
/// Counters and epochs: distinct nonces from concurrent sealers (across rekeys too), a new epoch
/// before the datagram limit and after the time limit, the receiver following on an authenticated
/// datagram only, the previous epoch kept briefly for reordering then dropped, older epochs gone,
/// catching up after lost epochs (bounded and rate-limited), and the 8-bit epoch wrapping.
/// </summary>
public class SecureUdpEpochTests
{
    [Theory]
    [InlineData(SecureUdpConstants.RekeyAfterDatagrams)]
    [InlineData(3000)] // rekeys while the threads seal
    public void Nonces_never_repeat_across_threads_and_every_datagram_opens(long rekeyAfterDatagrams)
    {
        const int threads = 8;
        const int perThread = 5000;
        var clock = new ManualClock();
        var (initiator, responder) = Pair(limits: Limits(clock, rekeyAfterDatagrams));
        var sealedDatagrams = new ConcurrentBag<byte[]>();
        Parallel.For(0, threads, new ParallelOptions { MaxDegreeOfParallelism = threads }, t =>
        {
            for (var i = 0; i < perThread; i++)
                sealedDatagrams.Add(Seal(initiator, BitConverter.GetBytes((t * perThread) + i)));
        });

        // Every (epoch, counter) pair, hence every nonce of every key, was used once.
        var all = sealedDatagrams.ToArray();
        Assert.Equal(threads * perThread, all.Length);
        Assert.Equal(all.Length, all.Select(d => (EpochOf(d), CounterOf(d))).Distinct().Count());
        Assert.All(all, d => Assert.True(CounterOf(d) < (ulong)rekeyAfterDatagrams));

        // No key sealed more than its limit. (A sealer that drew a counter just before another thread
        // moved the epoch on seals again under the new key: that counter is skipped, never reused.)
        Assert.All(all.GroupBy(EpochOf), epoch => Assert.True(epoch.Count() <= rekeyAfterDatagrams));
        Assert.InRange(initiator.Rekeys, all.Length / rekeyAfterDatagrams, (all.Length / rekeyAfterDatagrams) + threads);

        // In sending order the receiver opens them all, following the epochs, and each payload came once.
        var payloads = new HashSet<int>();
        foreach (var datagram in all.OrderBy(d => EpochOf(d)).ThenBy(CounterOf))
        {
            var (status, payload, _) = Open(responder, datagram);
            Assert.Equal(SecureDatagramStatus.Ok, status);
            Assert.True(payloads.Add(BitConverter.ToInt32(payload)));
        }

        Assert.Equal(initiator.SendEpoch, responder.ReceiveEpoch);
    }

    [Fact]
    public void The_sender_moves_to_a_new_epoch_before_the_datagram_limit_and_the_receiver_follows()
    {
        var clock = new ManualClock();
        var (initiator, responder) = Pair(limits: Limits(clock, rekeyAfterDatagrams: 100));
        var datagrams = Enumerable.Range(0, 250).Select(i => Seal(initiator, $"#{i}")).ToArray();
        Assert.Equal(Enumerable.Range(0, 250).Select(i => (i / 100, (ulong)(i % 100))), datagrams.Select(d => ((int)EpochOf(d), CounterOf(d))));
        Assert.Equal(2, initiator.SendEpoch);
        Assert.Equal(2, initiator.Rekeys);
        foreach (var datagram in datagrams)
            Assert.Equal(SecureDatagramStatus.Ok, Open(responder, datagram).Status);
        Assert.Equal(2, responder.ReceiveEpoch);
        Assert.Equal(2, responder.Rekeys);

        // The receiver refuses counters a key may not have sealed.
        Assert.Equal(SecureDatagramStatus.InvalidCounter, Open(responder, WithCounter(datagrams[^1], 100)).Status);
    }

    [Fact]
    public void The_sender_moves_to_a_new_epoch_after_the_time_limit()
    {
        var clock = new ManualClock();
        var (initiator, responder) = Pair(limits: Limits(clock));
        var first = Seal(initiator, "first");
        clock.Advance(SecureUdpConstants.RekeyAfterMilliseconds - 1);
        var second = Seal(initiator, "second");
        clock.Advance(1);
        var third = Seal(initiator, "third");
        Assert.Equal(new byte[] { 0, 0, 1 }, new[] { EpochOf(first), EpochOf(second), EpochOf(third) });
        Assert.Equal(0UL, CounterOf(third));
        foreach (var datagram in new[] { first, second, third })
            Assert.Equal(SecureDatagramStatus.Ok, Open(responder, datagram).Status);
        Assert.Equal(1, responder.ReceiveEpoch);
    }

    [Fact]
    public void The_previous_epoch_is_kept_briefly_for_reordering_then_dropped_and_older_ones_at_once()
    {
        var clock = new ManualClock();
        var (initiator, responder) = Pair(limits: Limits(clock, rekeyAfterDatagrams: 10));
        var epoch0 = Enumerable.Range(0, 10).Select(i => Seal(initiator, $"0.{i}")).ToArray();
        var epoch1 = Enumerable.Range(0, 10).Select(i => Seal(initiator, $"1.{i}")).ToArray();
        var epoch2 = Enumerable.Range(0, 10).Select(i => Seal(initiator, $"2.{i}")).ToArray();

        Assert.Equal(SecureDatagramStatus.Ok, Open(responder, epoch0[0]).Status);
        Assert.Equal(SecureDatagramStatus.Ok, Open(responder, epoch1[0]).Status); // moves to epoch 1
        Assert.Equal(SecureDatagramStatus.Ok, Open(responder, epoch0[1]).Status); // reordered: the previous epoch still opens
        Assert.Equal(SecureDatagramStatus.Replay, Open(responder, epoch0[1]).Status);
        clock.Advance(SecureUdpConstants.PreviousEpochMilliseconds);
        Assert.Equal(SecureDatagramStatus.UnknownEpoch, Open(responder, epoch0[2]).Status); // kept no longer

        Assert.Equal(SecureDatagramStatus.Ok, Open(responder, epoch2[0]).Status); // moves to epoch 2
        Assert.Equal(SecureDatagramStatus.Ok, Open(responder, epoch1[1]).Status);
        Assert.Equal(SecureDatagramStatus.UnknownEpoch, Open(responder, epoch0[3]).Status); // two back: gone at once
        Assert.Equal(2, responder.ReceiveEpoch);
    }

    [Fact]
    public void Only_an_authenticated_datagram_moves_the_receive_epoch()
    {
        var clock = new ManualClock();
        var (initiator, responder) = Pair(limits: Limits(clock));
        var current = Seal(initiator, "epoch 0");
        Assert.Equal(SecureDatagramStatus.AuthenticationFailed, Open(responder, WithEpoch(current, 1)).Status);
        Assert.Equal(SecureDatagramStatus.AuthenticationFailed, Open(responder, WithEpoch(current, 5)).Status); // a catch-up try
        Assert.Equal(0, responder.ReceiveEpoch);
        Assert.Equal(0, responder.Rekeys);
        Assert.Equal(SecureDatagramStatus.Ok, Open(responder, current).Status);
    }

    [Fact]
    public void A_receiver_catches_up_when_whole_epochs_were_lost_within_its_bound()
    {
        var clock = new ManualClock();
        var (initiator, responder) = Pair(limits: Limits(clock));
        Assert.Equal(SecureDatagramStatus.Ok, Open(responder, Seal(initiator, "epoch 0")).Status);
        for (var i = 0; i < 5; i++)
        {
            clock.Advance(SecureUdpConstants.RekeyAfterMilliseconds);
            _ = Seal(initiator, "lost"); // a path down: every datagram of epochs 1 to 5 lost
        }

        clock.Advance(SecureUdpConstants.RekeyAfterMilliseconds);
        var epoch6 = Seal(initiator, "epoch 6");
        Assert.Equal(6, EpochOf(epoch6));
        var (status, payload, _) = Open(responder, epoch6);
        Assert.Equal(SecureDatagramStatus.Ok, status);
        Assert.Equal("epoch 6"u8.ToArray(), payload);
        Assert.Equal(6, responder.ReceiveEpoch);
        Assert.Equal(SecureDatagramStatus.Ok, Open(responder, Seal(initiator, "then on")).Status);
    }

    [Fact]
    public void Catching_up_is_bounded_and_rate_limited()
    {
        var clock = new ManualClock();
        var limits = new SecureUdpLimits { Clock = () => clock.Now, MaxEpochsAhead = 4 };
        var (initiator, responder) = Pair(limits: limits);
        for (var i = 0; i < 3; i++)
        {
            clock.Advance(SecureUdpConstants.RekeyAfterMilliseconds);
            _ = Seal(initiator, "lost");
        }

        var genuine = Seal(initiator, "epoch 3");
        Assert.Equal(3, EpochOf(genuine));

        // A forgery for another epoch spends the try; the genuine datagram must wait for the interval.
        // (One for the genuine datagram's own epoch would not: that key would be cached, see SecureUdpForgeryTests.)
        Assert.Equal(SecureDatagramStatus.AuthenticationFailed, Open(responder, WithEpoch(WithCounter(genuine, 9), 2)).Status);
        Assert.Equal(SecureDatagramStatus.UnknownEpoch, Open(responder, genuine).Status);
        clock.Advance(SecureUdpConstants.CatchUpIntervalMilliseconds);
        Assert.Equal(SecureDatagramStatus.Ok, Open(responder, genuine).Status);

        // Past the bound a receiver cannot follow.
        for (var i = 0; i < 5; i++)
        {
            clock.Advance(SecureUdpConstants.RekeyAfterMilliseconds);
            _ = Seal(initiator, "lost");
        }

        clock.Advance(SecureUdpConstants.CatchUpIntervalMilliseconds);
        Assert.Equal(SecureDatagramStatus.UnknownEpoch, Open(responder, Seal(initiator, "epoch 8")).Status);
        Assert.Equal(3, responder.ReceiveEpoch);
    }

    [Fact]
    public void The_8_bit_epoch_wraps_and_both_sides_go_on()
    {
        var clock = new ManualClock();
        var (initiator, responder) = Pair(limits: Limits(clock, rekeyAfterDatagrams: 2));
        for (var i = 0; i < 600; i++)
        {
            var datagram = Seal(initiator, $"#{i}");
            Assert.Equal((byte)(i / 2), EpochOf(datagram));
            Assert.Equal(SecureDatagramStatus.Ok, Open(responder, datagram).Status);
            Assert.Equal(SecureDatagramStatus.Replay, Open(responder, datagram).Status);
        }

        Assert.Equal(299, initiator.SendEpoch);
        Assert.Equal(299, responder.ReceiveEpoch);
    }
}
