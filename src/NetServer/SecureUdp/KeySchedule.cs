using System.Buffers.Binary;
using System.Runtime.CompilerServices;

namespace NetServer.SecureUdp;

/// <summary>
/// The key schedule, all HKDF-SHA256 (RFC 5869), labels in <see cref="SecureUdpConstants"/>:
/// <code>
/// prk          = Extract(salt "NetServer secure UDP v1", session secret)
/// T0(i2r, r2i) = Expand(prk, label | algorithm | initiator's index | responder's index | context, 32)
/// key, iv      = Expand(Te, "sudp1 key", 32), Expand(Te, "sudp1 iv", 12)
/// T(e+1)       = Expand(Te, "sudp1 next", 32)    (Te erased once T(e+1) exists: a ratchet)
/// </code>
/// The direction label makes the two directions' keys differ (a datagram reflected to its sender
/// does not open); the algorithm, both indexes and the caller's context (a session id, both
/// parties' ids) bind the keys to this one session.
/// </summary>
internal static class KeySchedule
{
    private const int LabelLength = 9; // every direction label is "sudp1 xxx"

    /// <summary>Derives both directions' epoch-0 traffic secrets from the session secret.</summary>
    public static void InitialSecrets(
        ReadOnlySpan<byte> secret, ReadOnlySpan<byte> context, SecureUdpAlgorithm algorithm,
        uint initiatorIndex, uint responderIndex, Span<byte> initiatorToResponder, Span<byte> responderToInitiator)
    {
        Span<byte> prk = stackalloc byte[Hkdf.HashLength];
        Hkdf.Extract(SecureUdpConstants.Salt, secret, prk);

        // label(9) | algorithm(1) | initiator's index(4) | responder's index(4) | context: a fixed-length
        // prefix, so no two (indexes, context) pairs give the same info.
        var info = new byte[LabelLength + 1 + 4 + 4 + context.Length];
        info[LabelLength] = (byte)algorithm;
        BinaryPrimitives.WriteUInt32BigEndian(info.AsSpan(LabelLength + 1), initiatorIndex);
        BinaryPrimitives.WriteUInt32BigEndian(info.AsSpan(LabelLength + 5), responderIndex);
        context.CopyTo(info.AsSpan(LabelLength + 9));

        SecureUdpConstants.InitiatorToResponderLabel.CopyTo(info);
        Hkdf.Expand(prk, info, initiatorToResponder);
        SecureUdpConstants.ResponderToInitiatorLabel.CopyTo(info);
        Hkdf.Expand(prk, info, responderToInitiator);
        Erase(prk);
    }

    /// <summary>An epoch's AEAD key and IV from its traffic secret.</summary>
    public static void KeyAndIv(ReadOnlySpan<byte> trafficSecret, Span<byte> key, Span<byte> iv)
    {
        Hkdf.Expand(trafficSecret, SecureUdpConstants.KeyLabel, key);
        Hkdf.Expand(trafficSecret, SecureUdpConstants.IvLabel, iv);
    }

    /// <summary>The next epoch's traffic secret.</summary>
    public static void Next(ReadOnlySpan<byte> trafficSecret, Span<byte> next) =>
        Hkdf.Expand(trafficSecret, SecureUdpConstants.NextLabel, next);

    /// <summary>Overwrites key material with zeros (not optimized away: the call is never inlined).</summary>
    [MethodImpl(MethodImplOptions.NoInlining | MethodImplOptions.NoOptimization)]
    public static void Erase(Span<byte> secret) => secret.Clear();
}
