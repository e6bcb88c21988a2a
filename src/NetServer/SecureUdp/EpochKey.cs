using System.Buffers.Binary;

namespace NetServer.SecureUdp;

/// <summary>
/// The key of one direction in one epoch: its AEAD (made once, used for every datagram), its IV,
/// and either its send counter or its replay window. Only the newest key of a direction keeps its
/// traffic secret (to derive the next epoch); the others have erased theirs.
/// </summary>
internal sealed class EpochKey : IDisposable
{
    private readonly byte[] _iv = new byte[SecureUdpConstants.NonceLength];
    private byte[]? _secret;

    /// <summary>The next counter to hand out (send keys; <see cref="Interlocked"/>).</summary>
    public long Counter;

    private EpochKey(SecureUdpAlgorithm algorithm, byte[] secret, long epoch, long createdAt, bool receiving)
    {
        Span<byte> key = stackalloc byte[SecureUdpConstants.KeyLength];
        KeySchedule.KeyAndIv(secret, key, _iv);
        try
        {
            Aead = Aead.Create(algorithm, key);
        }
        finally
        {
            KeySchedule.Erase(key);
        }

        Algorithm = algorithm;
        _secret = secret;
        Epoch = epoch;
        CreatedAt = createdAt;
        Window = receiving ? new ReplayWindow() : null;
    }

    public SecureUdpAlgorithm Algorithm { get; }

    /// <summary>The epoch number (the wire carries its low 8 bits).</summary>
    public long Epoch { get; }

    /// <summary>When the key was made, in the clock's milliseconds.</summary>
    public long CreatedAt { get; }

    public Aead Aead { get; }

    /// <summary>Receive keys: the counters accepted.</summary>
    public ReplayWindow? Window { get; }

    /// <summary>Set (under the key's lock for send keys, the receive lock for receive keys) once the AEAD is gone.</summary>
    public bool IsDisposed { get; private set; }

    /// <summary>The epoch-0 key of a direction; takes ownership of <paramref name="secret"/>.</summary>
    public static EpochKey First(SecureUdpAlgorithm algorithm, byte[] secret, long now, bool receiving) =>
        new(algorithm, secret, 0, now, receiving);

    /// <summary>
    /// The key <paramref name="steps"/> epochs after this one (1: the next), derived by ratcheting
    /// this key's traffic secret forward. Keeps this key's secret (see <see cref="EraseSecret"/>).
    /// </summary>
    public EpochKey Ahead(int steps, long now)
    {
        var secret = new byte[SecureUdpConstants.TrafficSecretLength];
        KeySchedule.Next(_secret ?? throw new InvalidOperationException("This epoch key no longer holds its secret."), secret);
        Span<byte> step = stackalloc byte[SecureUdpConstants.TrafficSecretLength];
        for (var i = 1; i < steps; i++)
        {
            KeySchedule.Next(secret, step);
            step.CopyTo(secret);
        }

        KeySchedule.Erase(step);
        return new EpochKey(Algorithm, secret, Epoch + steps, now, Window is not null);
    }

    /// <summary>The nonce of <paramref name="counter"/>: the IV xor the counter, right-aligned big-endian (RFC 9001 section 5.3).</summary>
    public void Nonce(ulong counter, Span<byte> nonce)
    {
        _iv.CopyTo(nonce);
        var low = nonce.Slice(SecureUdpConstants.NonceLength - sizeof(ulong));
        BinaryPrimitives.WriteUInt64BigEndian(low, BinaryPrimitives.ReadUInt64BigEndian(low) ^ counter);
    }

    /// <summary>Forgets the traffic secret once the next key exists: this key can then derive nothing.</summary>
    public void EraseSecret()
    {
        if (_secret is { } secret)
            KeySchedule.Erase(secret);
        _secret = null;
    }

    public void Dispose()
    {
        if (IsDisposed)
            return;
        IsDisposed = true;
        Aead.Dispose();
        EraseSecret();
        KeySchedule.Erase(_iv);
    }
}
