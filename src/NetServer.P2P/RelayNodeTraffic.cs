namespace NetServer.P2P;

/// <summary>
/// What a message between relay nodes carries (<see cref="IRelayBackplane.PublishAsync"/>), so that
/// a backplane can bound the two apart: the cluster's upkeep must never be refused because peers
/// filled the bound (a node whose heartbeats are refused looks dead to the others).
/// </summary>
public enum RelayNodeTraffic
{
    /// <summary>What peers send: routed envelopes (to a peer, to everyone, to a room), the refusals they cause on the addressee's node, UDP pair keys and relayed datagrams. Refused first when the backplane is full.</summary>
    Peer = 0,

    /// <summary>The cluster's upkeep: heartbeats, the registry (joins, departures, a node's whole list and the request for it) and a node's goodbye. Few, at rates the relays set themselves.</summary>
    Control = 1,
}
