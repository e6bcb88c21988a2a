using System;

namespace NetServer.P2P;

/// <summary>The addressees that are not peers: what an envelope's <c>To</c> may hold besides a peer's or a room's id.</summary>
public static class RelayAddresses
{
    /// <summary>The relay itself (an empty <c>To</c>): control messages. An envelope the relay sends has an empty <c>From</c>.</summary>
    public static readonly Guid Relay = Guid.Empty;

    /// <summary>Every registered peer but the sender (ffffffff-ffff-ffff-ffff-ffffffffffff).</summary>
    public static readonly Guid Everyone = new("ffffffff-ffff-ffff-ffff-ffffffffffff");
}
