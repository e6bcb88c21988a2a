using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Security.Cryptography;
using System.Text;
using NetServer.P2P.Server;

namespace NetServer.P2P;

// Rooms: named groups a peer joins and leaves with a request (relay/room-join, relay/room-leave),
// addressed by the id the relay gives the room while it has members. Bounded three ways: rooms on
// the relay, rooms per peer, members per room; names by length.
public partial class RelayServer
{
    private readonly object _roomsLock = new();
    private readonly Dictionary<string, RelayRoomState> _roomsByName = new(StringComparer.Ordinal);
    private readonly ConcurrentDictionary<Guid, RelayRoomState> _roomsById = new();

    /// <summary>Rooms now.</summary>
    public int RoomCount
    {
        get
        {
            lock (_roomsLock)
                return _roomsByName.Count;
        }
    }

    internal RelayRoomState? FindRoom(Guid id) => _roomsById.TryGetValue(id, out var room) ? room : null;

    internal int RoomsOf(RelayPeerState peer)
    {
        lock (_roomsLock)
            return peer.Rooms.Count;
    }

    /// <summary>Adds <paramref name="peer"/> to the room named <paramref name="name"/>, made if new; joining a room it is in already is no change.</summary>
    internal RelayStatus JoinRoom(RelayPeerState peer, string name, out RelayRoomState? joined, out int members)
    {
        var limits = Limits;
        joined = null;
        members = 0;
        lock (_roomsLock)
        {
            if (peer.HasLeft)
                return RelayStatus.NotRegistered;
            _roomsByName.TryGetValue(name, out var room);
            if (room is not null && room.Contains(peer))
            {
                joined = room;
                members = room.Members.Length;
                return RelayStatus.Ok;
            }

            if (peer.Rooms.Count >= limits.MaxRoomsPerPeer || (room is null && _roomsByName.Count >= limits.MaxRooms))
                return RelayStatus.TooManyRooms;
            if (room is not null && room.Members.Length >= limits.MaxMembersPerRoom)
                return RelayStatus.RoomFull;
            if (room is null)
            {
                room = new RelayRoomState(Cluster is null ? NewId() : ClusterRoomId(name), name);
                _roomsByName.Add(name, room);
                _roomsById[room.Id] = room;
            }

            room.Add(peer);
            peer.Rooms.Add(room);
            joined = room;
            members = room.Members.Length; // under the lock: the count this join made
            return RelayStatus.Ok;
        }
    }

    /// <summary>Takes <paramref name="peer"/> out of a room (by id, else by name); the last member out ends the room.</summary>
    internal RelayStatus LeaveRoom(RelayPeerState peer, Guid id, string? name, out RelayRoomState? left, out int members)
    {
        lock (_roomsLock)
        {
            members = 0;
            left = FindLocked(id, name);
            if (left is null || !left.Contains(peer))
                return RelayStatus.NotMember;
            RemoveLocked(peer, left);
            members = left.Members.Length;
            return RelayStatus.Ok;
        }
    }

    /// <summary>The members of a room <paramref name="peer"/> is in (by id, else by name).</summary>
    internal RelayStatus MembersOf(RelayPeerState peer, Guid id, string? name, out RelayRoomState? room, out RelayPeerState[] members)
    {
        lock (_roomsLock)
        {
            room = FindLocked(id, name);
            members = room?.Members ?? [];
            return room is not null && room.Contains(peer) ? RelayStatus.Ok : RelayStatus.NotMember;
        }
    }

    private void LeaveAllRooms(RelayPeerState peer)
    {
        lock (_roomsLock)
        {
            for (var i = peer.Rooms.Count - 1; i >= 0; i--)
                RemoveLocked(peer, peer.Rooms[i]);
        }
    }

    /// <summary>
    /// A room's id in a cluster: the same on every node and at every time for one name (a hash of
    /// it), so a room spans the nodes; alone, a relay gives each room a fresh random id.
    /// </summary>
    private static Guid ClusterRoomId(string name)
    {
        var input = Encoding.UTF8.GetBytes("netserver-relay-room\0" + name);
#if NET
        var hash = SHA256.HashData(input);
#else
        using var sha = SHA256.Create();
        var hash = sha.ComputeHash(input);
#endif
        var id = new Guid(hash.AsSpan(0, 16));
        return id == RelayAddresses.Relay || id == RelayAddresses.Everyone ? NewId() : id;
    }

    private RelayRoomState? FindLocked(Guid id, string? name)
    {
        if (id != Guid.Empty)
            return _roomsById.TryGetValue(id, out var byId) ? byId : null;
        return name is not null && _roomsByName.TryGetValue(name, out var byName) ? byName : null;
    }

    private void RemoveLocked(RelayPeerState peer, RelayRoomState room)
    {
        room.Remove(peer);
        peer.Rooms.Remove(room);
        if (room.Members.Length != 0)
            return;
        _roomsByName.Remove(room.Name);
        _roomsById.TryRemove(room.Id, out _);
    }
}
