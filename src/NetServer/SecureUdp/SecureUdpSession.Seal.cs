using System.Buffers.Binary;
using NetServer.SecureUdp;

namespace NetServer;

public sealed partial class SecureUdpSession
{
    private EpochKey _send;

    /// <summary>
    /// Seals <paramref name="payload"/> as one datagram of <paramref name="type"/> into
    /// <paramref name="destination"/>: header, ciphertext, tag. The payload may already sit at
    /// <c>destination[HeaderLength..]</c> (sealed in place); it must not overlap the destination
    /// anywhere else. Thread-safe: concurrent seals get distinct counters, so no nonce repeats.
    /// </summary>
    /// <returns>The datagram's length: <paramref name="payload"/>'s plus <see cref="Overhead"/>.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="type"/> is not in <see cref="SecureDatagramType"/>.</exception>
    /// <exception cref="ArgumentException"><paramref name="destination"/> is too small, or overlaps the payload other than in place.</exception>
    /// <exception cref="ObjectDisposedException">The session was disposed.</exception>
    public int Seal(SecureDatagramType type, ReadOnlySpan<byte> payload, Span<byte> destination)
    {
        if (!SecureUdpConstants.IsKnownType((byte)type))
            ThrowHelper.ThrowArgumentOutOfRange(nameof(type), "Not a SecureDatagramType.");
        var length = (long)payload.Length + Overhead;
        if (destination.Length < length)
            throw new ArgumentException($"The destination needs {length} bytes: the payload and {Overhead} more.", nameof(destination));
        if (payload.Overlaps(destination, out var offset) && offset != -HeaderLength)
            throw new ArgumentException("The payload overlaps the destination: seal in place (the payload at destination[HeaderLength..]) or into separate memory.", nameof(destination));

        var header = destination.Slice(0, HeaderLength);
        var ciphertext = destination.Slice(HeaderLength, payload.Length);
        var tag = destination.Slice(HeaderLength + payload.Length, TagLength);
        Span<byte> nonce = stackalloc byte[SecureUdpConstants.NonceLength];
        var now = _limits.Clock();

        // A session that only sends still erases its expired previous receive key.
        if (Volatile.Read(ref _previous) is not null && now >= Volatile.Read(ref _previousExpiresAt))
        {
            lock (_receiveGate)
                SweepPrevious(now);
        }

        while (true)
        {
            var key = Volatile.Read(ref _send);

            // Each counter is handed out once per key, whatever the threads: the nonce never repeats.
            var counter = Interlocked.Increment(ref key.Counter) - 1;
            if (counter >= _limits.RekeyAfterDatagrams || now - key.CreatedAt >= _limits.RekeyAfterMilliseconds)
            {
                MoveToNextSendEpoch(key, now);
                continue;
            }

            header[SecureUdpConstants.TypeOffset] = (byte)type;
            BinaryPrimitives.WriteUInt32BigEndian(header.Slice(SecureUdpConstants.IndexOffset), RemoteIndex);
            header[SecureUdpConstants.EpochOffset] = (byte)key.Epoch;
            BinaryPrimitives.WriteUInt64BigEndian(header.Slice(SecureUdpConstants.CounterOffset), (ulong)counter);
            key.Nonce((ulong)counter, nonce);

            // The platform's AEAD object is not safe for concurrent use; the lock also keeps the key
            // from being disposed under a seal (a rotation disposes the old key holding this lock).
            lock (key)
            {
                if (key.IsDisposed)
                {
                    if (_disposed)
                        ThrowHelper.ThrowObjectDisposed(nameof(SecureUdpSession));
                    continue; // the epoch moved on meanwhile: seal again with the new key and a new counter
                }

                key.Aead.Seal(nonce, payload, ciphertext, tag, header);
            }

            _sealed.Increment();
            return (int)length;
        }
    }

    /// <summary>
    /// Moves sealing to the next epoch (its key ratcheted from the current one, whose secret is then
    /// erased), unless another thread did already; then disposes the old key.
    /// </summary>
    private void MoveToNextSendEpoch(EpochKey old, long now)
    {
        lock (_sendGate)
        {
            if (_disposed)
                ThrowHelper.ThrowObjectDisposed(nameof(SecureUdpSession));
            if (Volatile.Read(ref _send) != old)
                return;
            var next = old.Ahead(1, now);
            Volatile.Write(ref _send, next);
            Interlocked.Increment(ref _rekeys);
        }

        // Seals still inside the old key finish first; later ones find it disposed and take the new one.
        lock (old)
            old.Dispose();
    }
}
