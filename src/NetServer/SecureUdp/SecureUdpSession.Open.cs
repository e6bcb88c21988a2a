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
    internal SecureDatagramStatus OpenChecked(ReadOnlySpan<byte> datagram, Span<byte> plaintext, out SecureDatagramType type)
    {
        type = default;
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
            var now = _limits.Clock();
            if (_previous is not null && now >= _previousExpiresAt)
            {
                _previous.Dispose();
                _previous = null;
            }

            var key = KeyFor(header[SecureUdpConstants.EpochOffset], now);
            if (key is null)
                return Drop(SecureDatagramStatus.UnknownEpoch);
            var trial = key != _current && key != _next && key != _previous;

            var fresh = key.Window!.Check(counter);
            if (fresh != SecureDatagramStatus.Ok)
            {
                if (trial)
                    key.Dispose();
                Interlocked.Increment(ref _replays);
                return Drop(fresh);
            }

            key.Nonce(counter, nonce);
            if (!key.Aead.TryOpen(nonce, ciphertext, tag, plaintext, header))
            {
                if (trial)
                    key.Dispose();
                Interlocked.Increment(ref _authenticationFailures);
                return Drop(SecureDatagramStatus.AuthenticationFailed);
            }

            // Authentic: only now does the datagram count against the window, and only now may it move the epoch.
            key.Window.Accept(counter);
            if (key != _current && key != _previous)
                MoveToReceiveEpoch(key, now);
            _opened.Increment();
            type = (SecureDatagramType)header[SecureUdpConstants.TypeOffset];
            return SecureDatagramStatus.Ok;
        }
    }

    /// <summary>
    /// The receive key for a datagram's epoch byte: the current, next or previous epoch's, or, at
    /// most once per catch-up interval, a trial key derived some epochs ahead (a sender whose every
    /// datagram of an epoch was lost); null when there is none.
    /// </summary>
    private EpochKey? KeyFor(byte wireEpoch, long now)
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

        if (distance > _limits.MaxEpochsAhead || now < _catchUpAllowedAt)
            return null;
        _catchUpAllowedAt = now + _limits.CatchUpIntervalMilliseconds;
        return _next.Ahead(distance - 1, now);
    }

    /// <summary>A datagram of a later epoch authenticated: it becomes the current one; the one it replaces is kept briefly.</summary>
    private void MoveToReceiveEpoch(EpochKey key, long now)
    {
        var after = key.Ahead(1, now);
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
