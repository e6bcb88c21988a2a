using System;

namespace NetServer.Fuzz;

/// <summary>Secure UDP datagrams: what an attacker can send without the key.</summary>
internal static class SecureUdpTargets
{
    private static readonly byte[] s_secret = new byte[32];

    /// <summary>
    /// The input as a datagram never opens, whatever its header says. Then the input as the payload
    /// of a real datagram, one of whose bytes (chosen by the input) is changed: the changed copy never
    /// opens, and the true one still opens afterwards (a failure moved no replay window), once.
    /// </summary>
    public static void Datagram(ReadOnlySpan<byte> input)
    {
        using var sender = new SecureUdpSession(s_secret, "fuzz"u8, SecureUdpRole.Initiator, localIndex: 1, remoteIndex: 2);
        using var receiver = new SecureUdpSession(s_secret, "fuzz"u8, SecureUdpRole.Responder, localIndex: 2, remoteIndex: 1);

        var raw = input.ToArray();
        Invariant.Check(receiver.Open(raw, out _, out _) != SecureDatagramStatus.Ok, "bytes sealed with no key never open");

        var payload = input.Slice(0, Math.Min(input.Length, 1200));
        var sealedBytes = new byte[payload.Length + SecureUdpSession.Overhead];
        var length = sender.Seal(SecureDatagramType.Data, payload, sealedBytes);
        Invariant.Check(length == sealedBytes.Length, "a sealed datagram is the payload plus the overhead");
        if (input.Length >= 2 && input[1] != 0)
        {
            var tampered = (byte[])sealedBytes.Clone();
            tampered[input[0] % length] ^= input[1];
            Invariant.Check(receiver.Open(tampered, out _, out _) != SecureDatagramStatus.Ok, "a datagram changed in any byte never opens");
        }

        var copy = (byte[])sealedBytes.Clone();
        Invariant.Check(receiver.Open(copy, out var type, out var opened) == SecureDatagramStatus.Ok && type == SecureDatagramType.Data, "the true datagram opens after the forgeries");
        Invariant.Check(copy.AsSpan(SecureUdpSession.HeaderLength, opened).SequenceEqual(payload), "it opens to the payload sealed");
        Invariant.Check(receiver.Open((byte[])sealedBytes.Clone(), out _, out _) != SecureDatagramStatus.Ok, "a replay of it does not open");
    }
}
