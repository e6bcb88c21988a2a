using System;
using System.Buffers.Binary;
using NetServer.SecureUdp;
using Xunit;

namespace NetServer.Tests.SecureUdp;

/// <summary>A clock the test moves by hand (milliseconds), for rekeying on time and key expiry.</summary>
internal sealed class ManualClock
{
    public long Now { get; set; } = 1_000_000;

    public void Advance(long milliseconds) => Now += milliseconds;
}

/// <summary>Two ends of one session, and small helpers to seal and to change datagrams.</summary>
internal static class SecureSessions
{
    public const uint InitiatorIndex = 0x11112222;
    public const uint ResponderIndex = 0x33334444;

    public static readonly byte[] Context = "session 42: alice, bob"u8.ToArray();

    /// <summary>Limits with a manual clock (and, if given, a small datagram limit per key).</summary>
    public static SecureUdpLimits Limits(ManualClock clock, long rekeyAfterDatagrams = SecureUdpConstants.RekeyAfterDatagrams) =>
        new() { Clock = () => clock.Now, RekeyAfterDatagrams = rekeyAfterDatagrams };

    public static (SecureUdpSession Initiator, SecureUdpSession Responder) Pair(
        SecureUdpAlgorithm algorithm = SecureUdpAlgorithm.AesGcm, SecureUdpLimits? limits = null, byte[]? secret = null,
        uint initiatorIndex = InitiatorIndex, uint responderIndex = ResponderIndex)
    {
        secret ??= SecureUdpSession.NewSecret();
        limits ??= SecureUdpLimits.Default;
        return (
            new SecureUdpSession(secret, Context, SecureUdpRole.Initiator, initiatorIndex, responderIndex, algorithm, limits),
            new SecureUdpSession(secret, Context, SecureUdpRole.Responder, responderIndex, initiatorIndex, algorithm, limits));
    }

    public static byte[] Seal(SecureUdpSession session, ReadOnlySpan<byte> payload, SecureDatagramType type = SecureDatagramType.Data)
    {
        var datagram = new byte[payload.Length + SecureUdpSession.Overhead];
        Assert.Equal(datagram.Length, session.Seal(type, payload, datagram));
        return datagram;
    }

    public static byte[] Seal(SecureUdpSession session, string text) => Seal(session, System.Text.Encoding.UTF8.GetBytes(text));

    /// <summary>Opens a copy of <paramref name="datagram"/> (so the original can be opened again); the payload when Ok, else null.</summary>
    public static (SecureDatagramStatus Status, byte[]? Payload, SecureDatagramType Type) Open(SecureUdpSession session, byte[] datagram)
    {
        var copy = (byte[])datagram.Clone();
        var status = session.Open(copy, out var type, out var length);
        return (status, status == SecureDatagramStatus.Ok ? copy.AsSpan(SecureUdpSession.HeaderLength, length).ToArray() : null, type);
    }

    public static ulong CounterOf(byte[] datagram) => BinaryPrimitives.ReadUInt64BigEndian(datagram.AsSpan(6));

    public static byte EpochOf(byte[] datagram) => datagram[5];

    public static uint IndexOf(byte[] datagram) => BinaryPrimitives.ReadUInt32BigEndian(datagram.AsSpan(1));

    /// <summary>A copy with a changed header field (the tag no longer matches).</summary>
    public static byte[] WithCounter(byte[] datagram, ulong counter)
    {
        var copy = (byte[])datagram.Clone();
        BinaryPrimitives.WriteUInt64BigEndian(copy.AsSpan(6), counter);
        return copy;
    }

    public static byte[] WithEpoch(byte[] datagram, byte epoch)
    {
        var copy = (byte[])datagram.Clone();
        copy[5] = epoch;
        return copy;
    }
}
