using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Diagnostics.CodeAnalysis;
using System.Security.Cryptography;
using NetServer.SecureUdp;

namespace NetServer;

/// <summary>
/// The secure sessions of one socket, found by the receiver index every datagram carries: each
/// side picks the index it receives on (<see cref="NewIndex"/>) and tells the other out of band.
/// <see cref="Open(Span{byte}, out SecureUdpSession?, out SecureDatagramType, out int)"/> drops what no session can own (truncated, of an unknown type, for an
/// unknown index) before any cryptography, counts it here, and hands the rest to its session.
/// Thread-safe; lookups take no lock and allocate nothing.
/// </summary>
public sealed class SecureUdpSessionTable
{
    private readonly ConcurrentDictionary<uint, SecureUdpSession> _sessions = new();
    private long _truncated;
    private long _unknownType;
    private long _unknownIndex;
    private readonly FailureBudget _failureBudget;

    /// <summary>A table; throws on the netstandard2.0 build, which has no secure UDP.</summary>
    /// <exception cref="PlatformNotSupportedException">The netstandard2.0 build.</exception>
    public SecureUdpSessionTable()
        : this(SecureUdpLimits.Default)
    {
    }

    internal SecureUdpSessionTable(SecureUdpLimits limits)
    {
        Aead.EnsureAvailable();
        _failureBudget = new FailureBudget(limits.TableFailuresPerSecond, limits.TableFailuresPerSecond);
    }

    /// <summary>Sessions in the table.</summary>
    public int Count => _sessions.Count;

    /// <summary>Datagrams dropped for being shorter than <see cref="SecureUdpSession.Overhead"/>.</summary>
    public long DatagramsTruncated => Interlocked.Read(ref _truncated);

    /// <summary>Datagrams dropped for a type byte not in <see cref="SecureDatagramType"/>.</summary>
    public long DatagramsOfUnknownType => Interlocked.Read(ref _unknownType);

    /// <summary>Datagrams dropped for a receiver index no session here has.</summary>
    public long DatagramsForUnknownIndex => Interlocked.Read(ref _unknownIndex);

    /// <summary>Called (on the thread that removed it) for each session <see cref="Remove"/> takes out.</summary>
    internal Action<SecureUdpSession>? Removed { get; set; }

    /// <summary>Adds <paramref name="session"/> under its <see cref="SecureUdpSession.LocalIndex"/>.</summary>
    /// <returns>False if another session has that index already.</returns>
    public bool TryAdd(SecureUdpSession session)
    {
        if (session is null)
            ThrowHelper.ThrowArgumentNull(nameof(session));
        return _sessions.TryAdd(session.LocalIndex, session);
    }

    /// <summary>Removes <paramref name="session"/> (it is not disposed: the caller owns it).</summary>
    /// <returns>False if it was not in the table.</returns>
    public bool Remove(SecureUdpSession session)
    {
        if (session is null)
            ThrowHelper.ThrowArgumentNull(nameof(session));
        if (!((ICollection<KeyValuePair<uint, SecureUdpSession>>)_sessions).Remove(new KeyValuePair<uint, SecureUdpSession>(session.LocalIndex, session)))
            return false;
        Removed?.Invoke(session);
        return true;
    }

    /// <summary>The session that receives on <paramref name="localIndex"/>.</summary>
    public bool TryGet(uint localIndex, [NotNullWhen(true)] out SecureUdpSession? session) => _sessions.TryGetValue(localIndex, out session);

    /// <summary>
    /// A random index no session here uses yet (random, so that an index is no guess for someone
    /// off the path). It is not reserved: add the session before asking for another.
    /// </summary>
    public uint NewIndex()
    {
        using var random = RandomNumberGenerator.Create();
        var buffer = new byte[sizeof(uint)];
        while (true)
        {
            random.GetBytes(buffer);
            var index = BitConverter.ToUInt32(buffer, 0);
            if (index != 0 && !_sessions.ContainsKey(index))
                return index;
        }
    }

    /// <summary>
    /// Opens a datagram in place for whichever session its receiver index names: on
    /// <see cref="SecureDatagramStatus.Ok"/> the payload is <c>datagram.Slice(SecureUdpSession.HeaderLength, payloadLength)</c>
    /// and <paramref name="session"/> is the session it authenticated for. Any other status drops it:
    /// counted here (no session) or by the session, never thrown.
    /// </summary>
    /// <param name="datagram">A whole datagram as received.</param>
    /// <param name="session">The session the index named (also when it refused the datagram); null when none did.</param>
    /// <param name="type">The datagram's type (when Ok).</param>
    /// <param name="payloadLength">The payload's length (when Ok).</param>
    public SecureDatagramStatus Open(Span<byte> datagram, out SecureUdpSession? session, out SecureDatagramType type, out int payloadLength) =>
        Open(datagram, out session, out type, out payloadLength, out _);

    /// <summary>
    /// As <see cref="Open(Span{byte}, out SecureUdpSession?, out SecureDatagramType, out int)"/>;
    /// <paramref name="isNewest"/> tells (when Ok) whether the datagram carried the highest counter of
    /// the newest epoch yet: only such a datagram may move the session's
    /// <see cref="SecureUdpSession.RemoteEndpoint"/> (a replayed or held-back one may come from anywhere).
    /// </summary>
    public SecureDatagramStatus Open(Span<byte> datagram, out SecureUdpSession? session, out SecureDatagramType type, out int payloadLength,
        out bool isNewest)
    {
        isNewest = false;
        session = null;
        type = default;
        payloadLength = 0;
        switch (SecureUdpSession.Inspect(datagram, out var index))
        {
            case SecureDatagramStatus.Truncated:
                Interlocked.Increment(ref _truncated);
                return SecureDatagramStatus.Truncated;
            case SecureDatagramStatus.UnknownType:
                Interlocked.Increment(ref _unknownType);
                return SecureDatagramStatus.UnknownType;
        }

        if (!_sessions.TryGetValue(index, out session))
        {
            Interlocked.Increment(ref _unknownIndex);
            return SecureDatagramStatus.UnknownIndex;
        }

        var length = datagram.Length - SecureUdpSession.Overhead;
        var status = session.OpenChecked(datagram, datagram.Slice(SecureUdpSession.HeaderLength, length), _failureBudget, out type, out isNewest);
        if (status == SecureDatagramStatus.Ok)
            payloadLength = length;
        return status;
    }
}
