using System;
using System.Buffers.Binary;
using System.Linq;
using System.Security.Cryptography;
using NetServer.Tests.Infrastructure;
using Xunit;
using static NetServer.Tests.SecureUdp.SecureSessions;

namespace NetServer.Tests.SecureUdp;

/// <summary>
/// What a forger can make a session do: the failure budget (over it, no AEAD runs and nothing is
/// allocated), the integrity limit, cached catch-up keys, the framing as fixed bytes, and header
/// fields changed to other valid values.
/// </summary>
public class SecureUdpForgeryTests
{
    private static byte[] Forged(byte[] datagram)
    {
        var copy = (byte[])datagram.Clone();
        copy[^1] ^= 0x80; // the tag
        return copy;
    }

    [Fact]
    public void Forgeries_over_the_budget_are_dropped_unopened_and_allocate_nothing()
    {
        var clock = new ManualClock();
        var limits = Limits(clock);
        limits.SessionFailuresPerSecond = 4;
        var (initiator, responder) = Pair(limits: limits);
        var forged = Forged(Seal(initiator, "x"));

        for (var i = 0; i < 4; i++)
            Assert.Equal(SecureDatagramStatus.AuthenticationFailed, Open(responder, forged).Status);
        Assert.Equal(SecureDatagramStatus.RateLimited, Open(responder, forged).Status);
        Assert.Equal(4, responder.AuthenticationFailures);
        Assert.Equal(1, responder.DatagramsRateLimited);

        var status = SecureDatagramStatus.Ok;
        var allocated = Allocations.Least(() => status = responder.Open(forged, out _, out _), roundsPerWindow: 1000);
        Assert.Equal(SecureDatagramStatus.RateLimited, status);
        Assert.Equal(0, allocated);
        Assert.Equal(4, responder.AuthenticationFailures); // no AEAD ran for any of them

        // Over budget even an authentic datagram waits for the budget to refill (documented).
        var genuine = Seal(initiator, "y");
        Assert.Equal(SecureDatagramStatus.RateLimited, Open(responder, genuine).Status);
        clock.Advance(1000);
        Assert.Equal(SecureDatagramStatus.Ok, Open(responder, genuine).Status);
    }

    [Fact]
    public void The_table_budget_is_shared_by_its_sessions()
    {
        var clock = new ManualClock();
        var limits = Limits(clock);
        limits.TableFailuresPerSecond = 2;
        var table = new SecureUdpSessionTable(limits);
        var (i1, r1) = Pair(limits: limits, initiatorIndex: 1, responderIndex: 2);
        var (i2, r2) = Pair(limits: limits, initiatorIndex: 3, responderIndex: 4);
        Assert.True(table.TryAdd(r1));
        Assert.True(table.TryAdd(r2));

        Assert.Equal(SecureDatagramStatus.AuthenticationFailed, table.Open(Forged(Seal(i1, "a")), out _, out _, out _));
        Assert.Equal(SecureDatagramStatus.AuthenticationFailed, table.Open(Forged(Seal(i2, "b")), out _, out _, out _));
        Assert.Equal(SecureDatagramStatus.RateLimited, table.Open(Forged(Seal(i2, "c")), out _, out _, out _));
        Assert.Equal(1, r2.DatagramsRateLimited);
    }

    [Fact]
    public void A_session_refuses_everything_at_its_integrity_limit()
    {
        var limits = Limits(new ManualClock());
        limits.IntegrityLimit = 3;
        var (initiator, responder) = Pair(limits: limits);
        for (var i = 0; i < 3; i++)
            Assert.Equal(SecureDatagramStatus.AuthenticationFailed, Open(responder, Forged(Seal(initiator, "x"))).Status);
        Assert.Equal(SecureDatagramStatus.IntegrityLimitReached, Open(responder, Seal(initiator, "y")).Status);
    }

    [Fact]
    public void A_forgery_for_a_later_epoch_does_not_starve_a_lagging_receiver()
    {
        var limits = Limits(new ManualClock(), rekeyAfterDatagrams: 2);
        var (initiator, responder) = Pair(limits: limits);
        byte[] datagram = [];
        for (var i = 0; i < 7; i++)
            datagram = Seal(initiator, "x"); // all lost but the last: counters 0 of epoch 3
        Assert.Equal(3, EpochOf(datagram));

        // The forgery spends the catch-up slot on deriving epoch 3; the genuine datagram, at the same
        // instant, finds that key cached and opens.
        Assert.Equal(SecureDatagramStatus.AuthenticationFailed, Open(responder, Forged(datagram)).Status);
        Assert.Equal(SecureDatagramStatus.Ok, Open(responder, datagram).Status);
        Assert.Equal(3, responder.ReceiveEpoch);
        Assert.Equal(SecureDatagramStatus.Ok, Open(responder, Seal(initiator, "next")).Status);
    }

    [Fact]
    public void The_framing_is_these_exact_bytes_in_epoch_0_and_after_the_first_ratchet()
    {
        // Pinned from an independent implementation (Python, hmac + cryptography's AESGCM) of docs/secure-udp.md.
        const string Epoch0 = "010A0B0C0D000000000000000000DC4880CAF04EAB5426A239BA03B84CDDC109E4EE0F";
        const string Epoch1 = "010A0B0C0D010000000000000000DC4BB351A13BF1FF069960AABBE94D553970FE10AA";
        var secret = Enumerable.Range(0, 32).Select(i => (byte)i).ToArray();
        var limits = Limits(new ManualClock(), rekeyAfterDatagrams: 1);
        using var session = new SecureUdpSession(secret, "kat"u8, SecureUdpRole.Initiator, 0x01020304, 0x0A0B0C0D, SecureUdpAlgorithm.AesGcm, limits);
        Assert.Equal(Epoch0, Convert.ToHexString(Seal(session, "hello")));
        Assert.Equal(Epoch1, Convert.ToHexString(Seal(session, "hello")));

        // And derived here, with the platform's HKDF and AesGcm, per the documented schedule.
        var prk = HKDF.Extract(HashAlgorithmName.SHA256, secret, "NetServer secure UDP v1"u8.ToArray());
        var info = "sudp1 i2r"u8.ToArray().Concat(new byte[] { 0, 1, 2, 3, 4, 10, 11, 12, 13 }).Concat("kat"u8.ToArray()).ToArray();
        var t0 = HKDF.Expand(HashAlgorithmName.SHA256, prk, 32, info);
        Assert.Equal(Epoch0, Convert.ToHexString(Sealed(t0, 0)));
        Assert.Equal(Epoch1, Convert.ToHexString(Sealed(HKDF.Expand(HashAlgorithmName.SHA256, t0, 32, "sudp1 next"u8.ToArray()), 1)));

        static byte[] Sealed(byte[] traffic, byte epoch)
        {
            var key = HKDF.Expand(HashAlgorithmName.SHA256, traffic, 32, "sudp1 key"u8.ToArray());
            var nonce = HKDF.Expand(HashAlgorithmName.SHA256, traffic, 12, "sudp1 iv"u8.ToArray()); // xor counter 0
            var datagram = new byte[14 + 5 + 16];
            datagram[0] = 1;
            BinaryPrimitives.WriteUInt32BigEndian(datagram.AsSpan(1), 0x0A0B0C0D);
            datagram[5] = epoch;
            using var aes = new AesGcm(key, 16);
            aes.Encrypt(nonce, "hello"u8, datagram.AsSpan(14, 5), datagram.AsSpan(19), datagram.AsSpan(0, 14));
            return datagram;
        }
    }

    [Fact]
    public void A_header_field_changed_to_another_valid_value_fails_authentication()
    {
        var limits = Limits(new ManualClock());
        var table = new SecureUdpSessionTable(limits);
        var (initiator, responder) = Pair(limits: limits);
        var (_, second) = Pair(limits: limits, initiatorIndex: 5, responderIndex: 6);
        Assert.True(table.TryAdd(responder));
        Assert.True(table.TryAdd(second));
        var datagram = Seal(initiator, "payload");

        var otherType = (byte[])datagram.Clone();
        otherType[0] = (byte)SecureDatagramType.Keepalive;
        var otherIndex = (byte[])datagram.Clone();
        BinaryPrimitives.WriteUInt32BigEndian(otherIndex.AsSpan(1), second.LocalIndex);
        foreach (var changed in new[] { otherType, WithEpoch(datagram, 1), WithCounter(datagram, 7), otherIndex })
            Assert.Equal(SecureDatagramStatus.AuthenticationFailed, table.Open((byte[])changed.Clone(), out _, out _, out _));

        Assert.Equal(SecureDatagramStatus.Ok, table.Open(datagram, out var session, out _, out _));
        Assert.Same(responder, session);
        Assert.Equal(1, second.AuthenticationFailures);
    }
}
