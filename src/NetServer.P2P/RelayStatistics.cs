using System;

namespace NetServer.P2P;

/// <summary>A relay's totals since it was made (<see cref="RelayServer.GetStatistics"/>), read at one moment.</summary>
public sealed class RelayStatistics
{
    private readonly long[] _refusals;

    internal RelayStatistics(long[] refusals)
    {
        _refusals = refusals;
    }

    /// <summary>Connections now, registered or not.</summary>
    public long Connections { get; internal set; }

    /// <summary>Registered peers now.</summary>
    public int Peers { get; internal set; }

    /// <summary>The peer-list version: one more for each registration and each departure.</summary>
    public long PeersVersion { get; internal set; }

    /// <summary>Registrations accepted.</summary>
    public long Registrations { get; internal set; }

    /// <summary>Rooms now.</summary>
    public int Rooms { get; internal set; }

    /// <summary>Envelopes received from registered peers.</summary>
    public long MessagesReceived { get; internal set; }

    /// <summary>Copies delivered into peers' queues (a message to a room counts once per member reached).</summary>
    public long MessagesRelayed { get; internal set; }

    /// <summary>Bytes of those copies.</summary>
    public long BytesRelayed { get; internal set; }

    /// <summary>Refusals of every kind.</summary>
    public long Refusals
    {
        get
        {
            var total = 0L;
            foreach (var count in _refusals)
                total += count;
            return total;
        }
    }

    /// <summary>Refusals with <paramref name="status"/>.</summary>
    public long RefusalsOf(RelayStatus status) => (int)status >= 0 && (int)status < _refusals.Length ? _refusals[(int)status] : 0;

    /// <inheritdoc/>
    public override string ToString() =>
        FormattableString.Invariant($"{Peers} peers, {Connections} connections, {MessagesReceived} received, {MessagesRelayed} relayed, {Refusals} refused");
}
