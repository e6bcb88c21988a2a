namespace NetServer.SecureUdp;

/// <summary>
/// Every constant of secure UDP, in one place: the datagram layout, the limits of a key, the
/// epochs, the replay window and the labels of the key schedule (docs/secure-udp.md).
/// </summary>
/// <remarks>
/// Datagram: <c>type(1) | receiver index(4, big-endian) | epoch(1) | counter(8, big-endian) | ciphertext | tag(16)</c>.
/// The 14-byte header is the AEAD's associated data; the nonce is the epoch key's IV xor the counter
/// (QUIC, RFC 9001 section 5.3).
/// </remarks>
internal static class SecureUdpConstants
{
    // --- Layout ---

    public const int TypeOffset = 0;
    public const int IndexOffset = 1;
    public const int EpochOffset = 5;
    public const int CounterOffset = 6;
    public const int HeaderLength = 14;
    public const int TagLength = 16;
    public const int Overhead = HeaderLength + TagLength;

    // --- Keys ---

    /// <summary>The session secret (the relay's 32 random bytes, or the application's).</summary>
    public const int SecretLength = 32;

    /// <summary>A traffic secret (one per direction and epoch), an HKDF-SHA256 output.</summary>
    public const int TrafficSecretLength = 32;

    /// <summary>AES-256-GCM and ChaCha20-Poly1305 both take 32-byte keys.</summary>
    public const int KeyLength = 32;

    /// <summary>Both AEADs take a 96-bit nonce.</summary>
    public const int NonceLength = 12;

    // --- Limits of a key ---

    /// <summary>
    /// Datagrams a send key seals before the sender moves to the next epoch: counters 0 to this
    /// minus 1. Below 2^23, the most datagrams QUIC lets one AES-GCM key protect (RFC 9001
    /// section 6.6), with 2^16 to spare; the receiver refuses higher counters unopened.
    /// </summary>
    public const long RekeyAfterDatagrams = (1L << 23) - (1L << 16);

    /// <summary>Milliseconds a send key is used before the sender moves to the next epoch (WireGuard's REKEY_AFTER_TIME).</summary>
    public const long RekeyAfterMilliseconds = 120_000;

    /// <summary>Milliseconds the receiver keeps the previous epoch's key once the next one was used, for datagrams reordered across the switch.</summary>
    public const long PreviousEpochMilliseconds = 5_000;

    /// <summary>
    /// How many epochs ahead of its current one a receiver catches up to (a sender moves on once
    /// per <see cref="RekeyAfterMilliseconds"/> at most while it sends; every datagram of an epoch
    /// may have been lost while a path was down). Past it the session cannot recover: set up a new one.
    /// </summary>
    public const int MaxEpochsAhead = 64;

    /// <summary>Milliseconds between two tries to catch up more than one epoch (each derives keys before the tag can be checked).</summary>
    public const long CatchUpIntervalMilliseconds = 100;

    // --- Forged datagrams ---

    /// <summary>
    /// Authentication failures a session takes per second (and at once, as a burst) before it drops
    /// datagrams unopened until its budget refills: each failure costs an exception (about 10 us).
    /// </summary>
    public const long SessionFailuresPerSecond = 256;

    /// <summary>Authentication failures all the sessions of one table take per second (and at once) before they drop datagrams unopened.</summary>
    public const long TableFailuresPerSecond = 4096;

    /// <summary>
    /// Authentication failures a session survives with AES-GCM, across all its keys (RFC 9001
    /// section 6.6: 2^52); past it the session refuses every datagram.
    /// </summary>
    public const long AesGcmIntegrityLimit = 1L << 52;

    /// <summary>The same for ChaCha20-Poly1305 (RFC 9001 section 6.6: 2^36).</summary>
    public const long ChaChaIntegrityLimit = 1L << 36;

    // --- Replay window (RFC 6479; wireguard-go replay/) ---

    /// <summary>Bits per block of the replay bitmap (2^6 = 64, one ulong).</summary>
    public const int ReplayBlockBitLog = 6;

    /// <summary>Blocks of the bitmap ring (a power of 2): 64 blocks, 512 bytes per epoch key.</summary>
    public const int ReplayRingBlocks = 64;

    /// <summary>Counters behind the highest one accepted that are still told apart: (64 - 1) x 64 = 4032.</summary>
    public const int ReplayWindowSize = (ReplayRingBlocks - 1) << ReplayBlockBitLog;

    // --- Key schedule labels (HKDF-SHA256, RFC 5869) ---

    /// <summary>The HKDF-Extract salt: a version, so another key schedule never derives the same keys.</summary>
    public static ReadOnlySpan<byte> Salt => "NetServer secure UDP v1"u8;

    /// <summary>The initial traffic secret of datagrams from the initiator to the responder.</summary>
    public static ReadOnlySpan<byte> InitiatorToResponderLabel => "sudp1 i2r"u8;

    /// <summary>The initial traffic secret of datagrams from the responder to the initiator.</summary>
    public static ReadOnlySpan<byte> ResponderToInitiatorLabel => "sudp1 r2i"u8;

    /// <summary>An epoch's AEAD key, from its traffic secret.</summary>
    public static ReadOnlySpan<byte> KeyLabel => "sudp1 key"u8;

    /// <summary>An epoch's IV, from its traffic secret.</summary>
    public static ReadOnlySpan<byte> IvLabel => "sudp1 iv"u8;

    /// <summary>The next epoch's traffic secret, from the current one (old secrets are erased: a ratchet).</summary>
    public static ReadOnlySpan<byte> NextLabel => "sudp1 next"u8;

    /// <summary>Whether <paramref name="type"/> is in the registry (<see cref="SecureDatagramType"/>).</summary>
    public static bool IsKnownType(byte type) => type is >= (byte)SecureDatagramType.Data and <= (byte)SecureDatagramType.BindAck;
}
