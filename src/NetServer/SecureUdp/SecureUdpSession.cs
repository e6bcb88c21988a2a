using System.Security.Cryptography;
using NetServer.SecureUdp;

namespace NetServer;

/// <summary>
/// One secure datagram session between two parties: seals datagrams for the other side and opens
/// the other side's, with one key and one 64-bit counter per direction (derived with HKDF-SHA256
/// from a 32-byte secret, a context and the role), nonce = IV xor counter, the 14-byte header
/// authenticated, a sliding replay window updated only after a datagram authenticated, and a new
/// epoch key before 2^23 datagrams or two minutes. A building block with no socket: the secure
/// UDP server and client and the P2P layer use it; several sessions share a socket through a
/// <see cref="SecureUdpSessionTable"/> (docs/secure-udp.md).
/// </summary>
/// <remarks>
/// Thread-safe: any number of threads may seal at once (each datagram gets a counter of its own);
/// opens are serialized. A datagram that does not open is dropped and counted, never thrown: only
/// caller errors (a destination too small to seal into, an unknown type) throw. Sealing and opening
/// allocate nothing; setting up a session and each new epoch key do.
/// </remarks>
public sealed partial class SecureUdpSession : IDisposable
{
    /// <summary>Header bytes before the ciphertext: type(1), receiver index(4), epoch(1), counter(8).</summary>
    public const int HeaderLength = SecureUdpConstants.HeaderLength;

    /// <summary>Bytes of the authentication tag after the ciphertext.</summary>
    public const int TagLength = SecureUdpConstants.TagLength;

    /// <summary>What sealing adds to a payload: <see cref="HeaderLength"/> + <see cref="TagLength"/> = 30 bytes.</summary>
    public const int Overhead = SecureUdpConstants.Overhead;

    /// <summary>The length of a session secret: 32 bytes.</summary>
    public const int SecretLength = SecureUdpConstants.SecretLength;

    private readonly SecureUdpLimits _limits;
    private readonly object _sendGate = new();
    private readonly object _receiveGate = new();
    private EndPoint? _remoteEndpoint;
    private bool _disposed;

    // Updated by every sealing thread and by the receiving one: each on a cache line of its own.
    private PaddedCounter _sealed;
    private PaddedCounter _opened;
    private long _dropped;
    private long _authenticationFailures;
    private long _replays;
    private long _rateLimited;
    private long _rekeys;

    /// <summary>
    /// A session from a 32-byte <paramref name="secret"/> known to both sides (from the relay over
    /// TLS, or from the application), labelled with <paramref name="context"/> (for example a
    /// session id and both parties' ids, encoded unambiguously: both sides must pass the same bytes).
    /// The secret must serve this one session: a second session from the same secret, context and
    /// indexes would seal with the same keys and counters again. Make one with <see cref="NewSecret"/>.
    /// </summary>
    /// <param name="secret">The session secret, <see cref="SecretLength"/> bytes; copied, never kept.</param>
    /// <param name="context">Bytes both sides agree on that name this session (may be empty).</param>
    /// <param name="role">This side's role: exactly one side is the initiator.</param>
    /// <param name="localIndex">The index this side receives on (chosen by this side, told to the other out of band).</param>
    /// <param name="remoteIndex">The index the other side receives on (written into every datagram sealed here).</param>
    /// <param name="algorithm">The AEAD, agreed out of band; nothing on the wire names it.</param>
    /// <exception cref="ArgumentException">The secret is not 32 bytes.</exception>
    /// <exception cref="PlatformNotSupportedException">The netstandard2.0 build (no AES-GCM), or an algorithm this platform lacks.</exception>
    public SecureUdpSession(ReadOnlySpan<byte> secret, ReadOnlySpan<byte> context, SecureUdpRole role, uint localIndex, uint remoteIndex,
        SecureUdpAlgorithm algorithm = SecureUdpAlgorithm.AesGcm)
        : this(secret, context, role, localIndex, remoteIndex, algorithm, SecureUdpLimits.Default)
    {
    }

    internal SecureUdpSession(ReadOnlySpan<byte> secret, ReadOnlySpan<byte> context, SecureUdpRole role, uint localIndex, uint remoteIndex,
        SecureUdpAlgorithm algorithm, SecureUdpLimits limits)
    {
        Aead.EnsureAvailable();
        if (secret.Length != SecretLength)
            throw new ArgumentException($"A session secret is {SecretLength} bytes.", nameof(secret));
        if (role is not (SecureUdpRole.Initiator or SecureUdpRole.Responder))
            ThrowHelper.ThrowArgumentOutOfRange(nameof(role), "Not a SecureUdpRole.");
        if (!Aead.IsSupported(algorithm))
            Aead.Create(algorithm, default); // throws the platform's reason

        _limits = limits;
        _failureBudget = new FailureBudget(limits.SessionFailuresPerSecond, limits.SessionFailuresPerSecond);
        _integrityLimit = limits.IntegrityLimit
            ?? (algorithm == SecureUdpAlgorithm.AesGcm ? SecureUdpConstants.AesGcmIntegrityLimit : SecureUdpConstants.ChaChaIntegrityLimit);
        Role = role;
        Algorithm = algorithm;
        LocalIndex = localIndex;
        RemoteIndex = remoteIndex;

        var initiatorToResponder = new byte[SecureUdpConstants.TrafficSecretLength];
        var responderToInitiator = new byte[SecureUdpConstants.TrafficSecretLength];
        var initiator = role == SecureUdpRole.Initiator;
        KeySchedule.InitialSecrets(secret, context, algorithm, initiator ? localIndex : remoteIndex, initiator ? remoteIndex : localIndex,
            initiatorToResponder, responderToInitiator);
        var now = limits.Clock();
        _send = EpochKey.First(algorithm, initiator ? initiatorToResponder : responderToInitiator, now, receiving: false);
        _current = EpochKey.First(algorithm, initiator ? responderToInitiator : initiatorToResponder, now, receiving: true);
        _next = _current.Ahead(1, now);
        _current.EraseSecret();
    }

    /// <summary>This side's role.</summary>
    public SecureUdpRole Role { get; }

    /// <summary>The AEAD both sides use.</summary>
    public SecureUdpAlgorithm Algorithm { get; }

    /// <summary>The index this side receives on: datagrams for this session carry it.</summary>
    public uint LocalIndex { get; }

    /// <summary>The index the other side receives on: every datagram sealed here carries it.</summary>
    public uint RemoteIndex { get; }

    /// <summary>
    /// Where the other side was last heard from. The session never sets it: its user does, and only
    /// after <c>Open</c> returned <see cref="SecureDatagramStatus.Ok"/> (an endpoint changes only on
    /// an authenticated datagram). <see cref="SecureUdpServer"/> answers a session there.
    /// </summary>
    public EndPoint? RemoteEndpoint
    {
        get => Volatile.Read(ref _remoteEndpoint);
        set => Volatile.Write(ref _remoteEndpoint, value);
    }

    /// <summary>Datagrams sealed.</summary>
    public long DatagramsSealed => _sealed.Read();

    /// <summary>Datagrams opened: authentic and new.</summary>
    public long DatagramsOpened => _opened.Read();

    /// <summary>Datagrams this session refused, whatever the reason (the two counters below among them).</summary>
    public long DatagramsDropped => Interlocked.Read(ref _dropped);

    /// <summary>Datagrams whose tag did not verify.</summary>
    public long AuthenticationFailures => Interlocked.Read(ref _authenticationFailures);

    /// <summary>
    /// Datagrams dropped unopened because this session (or its table) had spent its budget of
    /// authentication failures (<see cref="SecureDatagramStatus.RateLimited"/>): no AEAD ran for them.
    /// </summary>
    public long DatagramsRateLimited => Interlocked.Read(ref _rateLimited);

    /// <summary>Datagrams refused as replays or as too old for the replay window.</summary>
    public long ReplaysDropped => Interlocked.Read(ref _replays);

    /// <summary>New epoch keys taken into use, in both directions.</summary>
    public long Rekeys => Interlocked.Read(ref _rekeys);

    /// <summary>The epoch datagrams are sealed in now.</summary>
    public long SendEpoch => Volatile.Read(ref _send).Epoch;

    /// <summary>The newest epoch a datagram was opened in (0 until the other side moves on).</summary>
    public long ReceiveEpoch
    {
        get
        {
            lock (_receiveGate)
                return _current.Epoch;
        }
    }

    /// <summary>32 random bytes for a new session (what a relay sends both parties over TLS).</summary>
    public static byte[] NewSecret()
    {
        var secret = new byte[SecretLength];
        using var random = RandomNumberGenerator.Create();
        random.GetBytes(secret);
        return secret;
    }

    /// <summary>Whether this build and platform can run sessions with <paramref name="algorithm"/>.</summary>
    public static bool IsSupported(SecureUdpAlgorithm algorithm) => Aead.IsSupported(algorithm);

    /// <summary>Erases every key. Seals that follow throw <see cref="ObjectDisposedException"/>; opens return <see cref="SecureDatagramStatus.UnknownIndex"/>.</summary>
    public void Dispose()
    {
        EpochKey send;
        lock (_sendGate)
        {
            lock (_receiveGate)
            {
                if (_disposed)
                    return;
                _disposed = true;
                _previous?.Dispose();
                _current.Dispose();
                _next.Dispose();
                if (_ahead is not null)
                {
                    foreach (var key in _ahead)
                        key?.Dispose();
                }
            }

            send = Volatile.Read(ref _send);
        }

        lock (send)
            send.Dispose();
    }

    private SecureDatagramStatus Drop(SecureDatagramStatus status)
    {
        Interlocked.Increment(ref _dropped);
        return status;
    }
}
