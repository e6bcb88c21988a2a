namespace NetServer.SecureUdp;

/// <summary>
/// The sliding replay window of one receive key: a bitmap of the last
/// <see cref="SecureUdpConstants.ReplayWindowSize"/> counters behind the highest one accepted
/// (RFC 6479, as wireguard-go's <c>replay/</c>). <see cref="Check"/> only looks;
/// <see cref="Accept(ulong)"/>, called once the datagram authenticated, records it, so a forged datagram
/// (a replayed or a far-ahead counter) changes nothing. Not thread-safe: the session's receive
/// lock guards it.
/// </summary>
internal sealed class ReplayWindow
{
    private const int BlockBits = 1 << SecureUdpConstants.ReplayBlockBitLog;
    private const ulong BlockMask = SecureUdpConstants.ReplayRingBlocks - 1;
    private const ulong BitMask = BlockBits - 1;

    private readonly ulong[] _ring = new ulong[SecureUdpConstants.ReplayRingBlocks];
    private ulong _last; // the highest counter accepted
    private bool _any; // whether any counter was accepted (counter 0 is a real counter)

    /// <summary>Whether <paramref name="counter"/> would be accepted: Ok, TooOld (left of the window) or Replay (seen).</summary>
    public SecureDatagramStatus Check(ulong counter)
    {
        if (!_any || counter > _last)
            return SecureDatagramStatus.Ok;
        if (_last - counter >= (ulong)SecureUdpConstants.ReplayWindowSize)
            return SecureDatagramStatus.TooOld;
        return (_ring[(counter >> SecureUdpConstants.ReplayBlockBitLog) & BlockMask] & (1UL << (int)(counter & BitMask))) != 0
            ? SecureDatagramStatus.Replay
            : SecureDatagramStatus.Ok;
    }

    /// <summary>Records an authenticated <paramref name="counter"/>; false if <see cref="Check"/> would refuse it (nothing changes then).</summary>
    public bool Accept(ulong counter) => Accept(counter, out _);

    /// <summary>
    /// As <see cref="Accept(ulong)"/>; <paramref name="advanced"/> tells whether the counter was the
    /// highest yet (the window moved): only such a datagram may move its sender's endpoint.
    /// </summary>
    public bool Accept(ulong counter, out bool advanced)
    {
        advanced = false;
        if (Check(counter) != SecureDatagramStatus.Ok)
            return false;
        advanced = !_any || counter > _last;
        var block = counter >> SecureUdpConstants.ReplayBlockBitLog;
        if (!_any)
        {
            _last = counter; // a new window's ring is all clear
            _any = true;
        }
        else if (counter > _last)
        {
            // Clear the blocks the window slides over (at most the whole ring), then move its head.
            var current = _last >> SecureUdpConstants.ReplayBlockBitLog;
            var diff = Math.Min(block - current, (ulong)SecureUdpConstants.ReplayRingBlocks);
            for (var i = current + 1; i <= current + diff; i++)
                _ring[i & BlockMask] = 0;
            _last = counter;
        }

        _ring[block & BlockMask] |= 1UL << (int)(counter & BitMask);
        return true;
    }
}
