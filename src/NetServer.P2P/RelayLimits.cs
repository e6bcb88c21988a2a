namespace NetServer.P2P;

/// <summary>The limits a relay announced to this client when it registered (its <see cref="RelayServerOptions"/>, as far as a peer needs them).</summary>
public sealed class RelayLimits
{
    internal RelayLimits()
    {
    }

    /// <summary>The longest envelope the relay takes, in bytes; <see cref="RelayClient"/> refuses to send a longer one.</summary>
    public int MaxMessageSize { get; internal set; }

    /// <summary>Messages per second this peer may have relayed (0: no limit).</summary>
    public int MessageRate { get; internal set; }

    /// <summary>Envelope bytes per second this peer may have relayed (0: no limit).</summary>
    public long ByteRate { get; internal set; }

    /// <summary>Rooms this peer may be in.</summary>
    public int MaxRooms { get; internal set; }

    /// <summary>Members a room may have.</summary>
    public int MaxRoomMembers { get; internal set; }

    /// <summary>Requests this peer may have in flight to other peers.</summary>
    public int MaxRequestsInFlight { get; internal set; }

    /// <summary>The longest peer name, in UTF-8 bytes.</summary>
    public int MaxNameLength { get; internal set; }
}
