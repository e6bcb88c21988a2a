using System;

namespace NetServer.P2P.Server;

/// <summary>
/// A room on the relay: its id, name and members. The member array is replaced (never changed in
/// place) under the room registry's lock, so a broadcast reads it without a lock.
/// </summary>
internal sealed class RelayRoomState(Guid id, string name)
{
    private volatile RelayPeerState[] _members = [];

    public Guid Id { get; } = id;

    public string Name { get; } = name;

    public RelayPeerState[] Members => _members;

    /// <summary>Under the registry's lock.</summary>
    public void Add(RelayPeerState peer)
    {
        var members = _members;
        var grown = new RelayPeerState[members.Length + 1];
        members.CopyTo(grown, 0);
        grown[members.Length] = peer;
        _members = grown;
    }

    /// <summary>Under the registry's lock; false if <paramref name="peer"/> was not a member.</summary>
    public bool Remove(RelayPeerState peer)
    {
        var members = _members;
        var index = Array.IndexOf(members, peer);
        if (index < 0)
            return false;
        var shrunk = new RelayPeerState[members.Length - 1];
        Array.Copy(members, 0, shrunk, 0, index);
        Array.Copy(members, index + 1, shrunk, index, members.Length - index - 1);
        _members = shrunk;
        return true;
    }

    public bool Contains(RelayPeerState peer) => Array.IndexOf(_members, peer) >= 0;
}
