using System.Buffers.Binary;
using NetServer.SecureUdp;

namespace NetServer;

public sealed partial class SecureUdpSession
{
    // Receive keys, guarded by _receiveGate. _current opens the epoch in use; _next the one after it
    // (derived ahead of time, the only receive key that still holds its traffic secret); _previous,
    // for a short while after a switch, the one before.
    private EpochKey _current;
    private EpochKey _next;
    private EpochKey? _previous;
    private long _previousExpiresAt;
    private long _catchUpAllowedAt = long.MinValue;
    private EpochKey?[]? _ahead; // keys derived past _next, by distance from _current (bounded by MaxEpochsAhead)
    private readonly FailureBudget _failureBudget;
    private readonly long _integrityLimit;

    /// <summary>
    /// Opens a datagram in place: on <see cref="SecureDatagramStatus.Ok"/> the payload is
    /// <c>datagram.Slice(HeaderLength, payloadLength)</c>, decrypted. Any other status drops the
    /// datagram: it was counted and changed nothing (its bytes may have been overwritten).
    /// </summary>
    /// <param name="datagram">A whole datagram as received.</param>
    /// <param name="type">The datagram's type (when Ok).</param>
    /// <param name="payloadLength">The payload's length (when Ok; 0 otherwise).</param>
    public SecureDatagramStatus Open(Span<byte> datagram, out SecureDatagramType type, out int payloadLength)
    {
        type = default;
        payloadLength = 0;
        var status = Inspect(datagram, out var index);
        if (status != SecureDatagramStatus.Ok || index != LocalIndex)
            return Drop(status == SecureDatagramStatus.Ok ? SecureDatagramStatus.UnknownIndex : status);
        var length = datagram.Length - Overhead;
        status = OpenChecked(datagram, datagram.Slice(HeaderLength, length), out type);
        if (status == SecureDatagramStatus.Ok)
            payloadLength = length;
        return status;
    }

    /// <summary>
    /// Opens a datagram into <paramref name="destination"/>, which may be the datagram's own
    /// payload bytes (<c>datagram[HeaderLength..]</c>) or separate memory. Any status but
    /// <see cref="SecureDatagramStatus.Ok"/> drops the datagram (counted, nothing changed).
    /// </summary>
    /// <returns><see cref="SecureDatagramStatus.DestinationTooSmall"/> when the payload does not fit; otherwise as <see cref="Open(Span{byte}, out SecureDatagramType, out int)"/>.</returns>
    /// <exception cref="ArgumentException"><paramref name="destination"/> overlaps the datagram other than at its payload.</exception>
    public SecureDatagramStatus Open(ReadOnlySpan<byte> datagram, Span<byte> destination, out SecureDatagramType type, out int payloadLength)
    {
        type = default;
        payloadLength = 0;
        if (datagram.Overlaps(destination, out var offset) && offset != HeaderLength)
            throw new ArgumentException("The destination overlaps the datagram: open in place (at datagram[HeaderLength..]) or into separate memory.", nameof(destination));
        var status = Inspect(datagram, out var index);
        if (status != SecureDatagramStatus.Ok || index != LocalIndex)
            return Drop(status == SecureDatagramStatus.Ok ? SecureDatagramStatus.UnknownIndex : status);
        var length = datagram.Length - Overhead;
        if (destination.Length < length)
            return Drop(SecureDatagramStatus.DestinationTooSmall);
        status = OpenChecked(datagram, destination.Slice(0, length), out type);
        if (status == SecureDatagramStatus.Ok)
            payloadLength = length;
        return status;
    }

    /// <summary>
    /// As <see cref="Open(Span{byte}, out SecureDatagramType, out int)"/>; <paramref name="isNewest"/>
    /// tells (when Ok) whether the datagram carried the highest counter of the newest epoch yet. Move
    /// <see cref="RemoteEndpoint"/> only on such a datagram: a replayed or held-back one may come from anywhere.
    /// </summary>
    public SecureDatagramStatus Open(Span<byte> datagram, out SecureDatagramType type, out int payloadLength, out bool isNewest)
    {
        type = default;
        payloadLength = 0;
        isNewest = false;
        var status = Inspect(datagram, out var index);
        if (status != SecureDatagramStatus.Ok || index != LocalIndex)
            return Drop(status == SecureDatagramStatus.Ok ? SecureDatagramStatus.UnknownIndex : status);
        var length = datagram.Length - Overhead;
        status = OpenChecked(datagram, datagram.Slice(HeaderLength, length), null, out type, out isNewest);
        if (status == SecureDatagramStatus.Ok)
            payloadLength = length;
        return status;
    }

    /// <summary>What can be told of a datagram before any key: long enough, of a known type (then its receiver index).</summary>
    internal static SecureDatagramStatus Inspect(ReadOnlySpan<byte> datagram, out uint index)
    {
        index = 0;
        if (datagram.Length < Overhead)
            return SecureDatagramStatus.Truncated;
        if (!SecureUdpConstants.IsKnownType(datagram[SecureUdpConstants.TypeOffset]))
            return SecureDatagramStatus.UnknownType;
        index = BinaryPrimitives.ReadUInt32BigEndian(datagram.Slice(SecureUdpConstants.IndexOffset));
        return SecureDatagramStatus.Ok;
    }

    /// <summary>Opens a datagram already inspected and addressed to this session into <paramref name="plaintext"/> (its payload's length).</summary>
    internal SecureDatagramStatus OpenChecked(ReadOnlySpan<byte> datagram, Span<byte> plaintext, out SecureDatagramType type) =>
        OpenChecked(datagram, plaintext, null, out type, out _);

    /// <summary>
    /// Opens a datagram already inspected and addressed to this session into <paramref name="plaintext"/>,
    /// spending <paramref name="tableBudget"/> too on a failure. <paramref name="newest"/>: the datagram
    /// carried the highest counter of the newest epoch yet (only such a one may move the endpoint).
    /// </summary>
    internal SecureDatagramStatus OpenChecked(ReadOnlySpan<byte> datagram, Span<byte> plaintext, FailureBudget? tableBudget,
        out SecureDatagramType type, out bool newest)
    {
        type = default;
        newest = false;
        var header = datagram.Slice(0, HeaderLength);
        var ciphertext = datagram.Slice(HeaderLength, plaintext.Length);
        var tag = datagram.Slice(HeaderLength + plaintext.Length, TagLength);
        var counter = BinaryPrimitives.ReadUInt64BigEndian(header.Slice(SecureUdpConstants.CounterOffset));

        // No honest sender seals past the limit: refused before any key is looked at.
        if (counter >= (ulong)_limits.RekeyAfterDatagrams)
            return Drop(SecureDatagramStatus.InvalidCounter);

        Span<byte> nonce = stackalloc byte[SecureUdpConstants.NonceLength];
        lock (_receiveGate)
        {
            if (_disposed)
                return Drop(SecureDatagramStatus.UnknownIndex);
            if (Interlocked.Read(ref _authenticationFailures) >= _integrityLimit)
                return Drop(SecureDatagramStatus.IntegrityLimitReached);
            var now = _limits.Clock();
            SweepPrevious(now);

            // Over budget, no AEAD runs (and no key is derived): the failure we cannot rule out costs an exception.
            var spent = _failureBudget.IsSpent(now) || (tableBudget?.IsSpent(now) ?? false);
            var key = KeyFor(header[SecureUdpConstants.EpochOffset], now, mayDerive: !spent);
            if (key is null)
                return Drop(spent ? RateLimited() : SecureDatagramStatus.UnknownEpoch);

            var fresh = key.Window!.Check(counter);
            if (fresh != SecureDatagramStatus.Ok)
            {
                Interlocked.Increment(ref _replays);
                return Drop(fresh);
            }

            if (spent)
                return Drop(RateLimited());
            key.Nonce(counter, nonce);
            if (!key.Aead.TryOpen(nonce, ciphertext, tag, plaintext, header))
            {
                _failureBudget.Spend(now);
                tableBudget?.Spend(now);
                Interlocked.Increment(ref _authenticationFailures);
                return Drop(SecureDatagramStatus.AuthenticationFailed);
            }

            // Authentic: only now does the datagram count against the window, and only now may it move the epoch.
            key.Window.Accept(counter, out var advanced);
            newest = advanced && key != _previous;
            if (key != _current && key != _previous)
                MoveToReceiveEpoch(key, now);
            _opened.Increment();
            type = (SecureDatagramType)header[SecureUdpConstants.TypeOffset];
            return SecureDatagramStatus.Ok;
        }
    }

    private SecureDatagramStatus RateLimited()
    {
        Interlocked.Increment(ref _rateLimited);
        return SecureDatagramStatus.RateLimited;
    }

    /// <summary>Disposes (and so erases) the previous epoch's receive key once its time is up; under the receive lock.</summary>
    private void SweepPrevious(long now)
    {
        if (_previous is not null && now >= _previousExpiresAt)
        {
            _previous.Dispose();
            _previous = null;
        }
    }

    /// <summary>
    /// The receive key for a datagram's epoch byte: the current, next or previous epoch's, or one
    /// some epochs ahead (a sender whose every datagram of an epoch was lost): taken from the cache
    /// of keys ahead, else derived and cached when <paramref name="mayDerive"/>, at most once per
    /// catch-up interval; null when there is none.
    /// </summary>
    private EpochKey? KeyFor(byte wireEpoch, long now, bool mayDerive)
    {
        var distance = (byte)(wireEpoch - (byte)_current.Epoch);
        switch (distance)
        {
            case 0:
                return _current;
            case 1:
                return _next;
            case byte.MaxValue:
                return _previous;
        }

        if (distance > _limits.MaxEpochsAhead)
            return null;
        _ahead ??= new EpochKey?[_limits.MaxEpochsAhead + 1];

        // A key already derived costs nothing more: a forgery for its epoch spends no catch-up slot,
        // so forgeries cannot starve a receiver that really lags.
        if (_ahead[distance] is { } cached)
            return cached;
        if (!mayDerive || now < _catchUpAllowedAt)
            return null;
        _catchUpAllowedAt = now + _limits.CatchUpIntervalMilliseconds;
        return _ahead[distance] = _next.Ahead(distance - 1, now);
    }

    /// <summary>A datagram of a later epoch authenticated: it becomes the current one; the one it replaces is kept briefly.</summary>
    private void MoveToReceiveEpoch(EpochKey key, long now)
    {
        var distance = (int)(key.Epoch - _current.Epoch);
        var ahead = _ahead;
        var after = ahead is not null && distance + 1 < ahead.Length && ahead[distance + 1] is { } cached ? cached : key.Ahead(1, now);
        if (ahead is not null)
        {
            // The cache shifts with the current epoch: keys now behind it go, the rest move down.
            for (var i = 2; i < ahead.Length; i++)
            {
                var entry = ahead[i];
                ahead[i] = null;
                if (entry is not null && entry != key && entry != after && i < distance + 2)
                    entry.Dispose();
                else if (entry is not null && i - distance >= 2)
                    ahead[i - distance] = entry;
            }
        }

        key.EraseSecret();
        if (key != _next)
            _next.Dispose(); // caught up past it
        _previous?.Dispose();
        _previous = _current;
        _previousExpiresAt = now + _limits.PreviousEpochMilliseconds;
        _current = key;
        _next = after;
        Interlocked.Increment(ref _rekeys);
    }
}
