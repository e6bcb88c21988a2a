using System;
using System.Text;
using NetServer.P2P.Internal;
using NetServer.P2P.Wire;
using NetServer.P2P.Wire.Contracts;
using NetServer.Protobuf;

namespace NetServer.P2P.Server;

// Control messages: envelopes addressed to the relay (To empty) with a "relay/" header. A kind a
// client may not send (those the relay sends), an unknown one, or a planned phase-2 one is refused
// with a status; so is anything addressed to the relay that is not a control kind.
internal sealed partial class RelaySession
{
    private static readonly UTF8Encoding s_strictUtf8 = new(encoderShouldEmitUTF8Identifier: false, throwOnInvalidBytes: true);

    private readonly object _snapshotLock = new();
    private Deadline? _snapshotDeadline;
    private bool _snapshotDue;

    /// <summary>Sends the welcome to a registering peer (under the view lock: its version is that of the list it carries).</summary>
    internal void Welcome(RelayPeerState peer, WelcomeMessage welcome)
    {
        _peer = peer;
        SendAsync(To(RelayServer.Control(RelayKinds.Welcome), peer), welcome);
    }

    private void OnUnregistered(in ProtoMessage message)
    {
        if (message.To != RelayAddresses.Relay || RelayKinds.Parse(message.HeaderUtf8) != RelayKind.Register)
        {
            RefuseAndClose(in message, RelayStatus.NotRegistered, "Register first: relay/register is the only message accepted before.");
            return;
        }

        _registration.Disarm();
        RegisterMessage request;
        try
        {
            request = message.Unpack<RegisterMessage>();
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            RefuseAndClose(in message, RelayStatus.InvalidRequest, "relay/register carries no Register message: " + e.Message);
            return;
        }

        if (request.Protocol != RelayProtocol.Version)
        {
            RefuseAndClose(in message, RelayStatus.Unsupported, $"This relay speaks control protocol {RelayProtocol.Version}, not {request.Protocol}.");
            return;
        }

        var name = request.Name ?? string.Empty;
        if (!IsValidName(name, _relay.Limits.MaxNameLength, allowEmpty: true, out var why))
        {
            RefuseAndClose(in message, RelayStatus.InvalidRequest, "The peer name " + why);
            return;
        }

        var certificate = (Connection as SslSession)?.Tls?.RemoteCertificate;
        var admitted = _relay.InvokeRegistering(new RelayRegistration(name, IpAddresses.Unmap(RemoteEndPoint), certificate));
        if (admitted != RelayStatus.Ok)
        {
            var status = admitted is < RelayStatus.UnknownPeer or RelayStatus.PeerLeft or >= RelayStatus.MessageTooLarge ? RelayStatus.RegistrationRefused : admitted;
            RefuseAndClose(in message, status, "The relay refused the registration.");
            return;
        }

        var registered = _relay.Register(this, name, out _);
        if (registered != RelayStatus.Ok)
            RefuseAndClose(in message, registered, $"At most {_relay.Limits.MaxPeersPerAddress} peers may register from one address, {_relay.Limits.MaxPeersPerIPv6Site} from one IPv6 /48 (0: no limit).");
    }

    private void OnControl(RelayPeerState peer, in ProtoMessage message)
    {
        peer.CountReceived();
        if (!peer.TryCharge(1, message.Raw.Length, Milliseconds.Now))
        {
            Refuse(peer, in message, RelayStatus.RateLimited, RateText());
            return;
        }

        switch (RelayKinds.Parse(message.HeaderUtf8))
        {
            case RelayKind.Ping when message.IsRequest:
                ReplyBytes(in message, default);
                break;
            case RelayKind.SnapshotRequest:
                RequestSnapshot(peer);
                break;
            case RelayKind.RoomJoin when message.IsRequest:
                JoinRoom(peer, in message);
                break;
            case RelayKind.RoomLeave when message.IsRequest:
                LeaveRoom(peer, in message);
                break;
            case RelayKind.RoomMembers when message.IsRequest:
                RoomMembers(peer, in message);
                break;
            case RelayKind.Register:
                Refuse(peer, in message, RelayStatus.AlreadyRegistered, $"This connection is registered as {peer.Id}; an id is bound to its connection for its life.");
                break;
            case RelayKind.UdpSession when message.IsRequest:
                PairKey(peer, in message);
                break;
            case RelayKind.UdpDatagram:
                ForwardDatagram(peer, in message);
                break;
            case RelayKind.Punch:
                Refuse(peer, in message, RelayStatus.Unsupported, "Peers exchange punch candidates as routed p2p/punch envelopes, not relay/punch (docs/p2p.md).");
                break;
            default:
                Refuse(peer, in message, RelayStatus.Forbidden, "Addressed to the relay, but not a control request it takes: " + message.Header);
                break;
        }
    }

    private void JoinRoom(RelayPeerState peer, in ProtoMessage message)
    {
        if (!TryReadRoom(peer, in message, out var request))
            return;
        var name = request.Name ?? string.Empty;
        if (!IsValidName(name, _relay.Limits.MaxRoomNameLength, allowEmpty: false, out var why))
        {
            Refuse(peer, in message, RelayStatus.InvalidRequest, "The room name " + why);
            return;
        }

        var status = _relay.JoinRoom(peer, name, out var room, out var members);
        if (status != RelayStatus.Ok)
        {
            Refuse(peer, in message, status, $"Cannot join room '{name}' (at most {_relay.Limits.MaxRoomsPerPeer} rooms per peer, {_relay.Limits.MaxMembersPerRoom} members per room, {_relay.Limits.MaxRooms} rooms).");
            return;
        }

        ReplyRoom(peer, in message, room!, members);
    }

    private void LeaveRoom(RelayPeerState peer, in ProtoMessage message)
    {
        if (!TryReadRoom(peer, in message, out var request))
            return;
        var status = _relay.LeaveRoom(peer, GuidBytes.Read(request.RoomId), request.Name, out var room, out var members);
        if (status != RelayStatus.Ok)
            Refuse(peer, in message, status, "Not a member of that room.");
        else
            ReplyRoom(peer, in message, room!, members);
    }

    private void RoomMembers(RelayPeerState peer, in ProtoMessage message)
    {
        if (!TryReadRoom(peer, in message, out var request))
            return;
        var status = _relay.MembersOf(peer, GuidBytes.Read(request.RoomId), request.Name, out var room, out var members);
        if (status != RelayStatus.Ok)
        {
            Refuse(peer, in message, status, "Not a member of that room.");
            return;
        }

        var reply = new RoomMembersMessage { RoomId = GuidBytes.ToArray(room!.Id) };
        foreach (var member in members)
            reply.Members.Add(GuidBytes.ToArray(member.Id));
        Reply(in message, To(RelayServer.Control(RelayKinds.RoomMembers), peer).Pack(reply));
    }

    private void ReplyRoom(RelayPeerState peer, in ProtoMessage message, RelayRoomState room, int members) =>
        Reply(in message, To(RelayServer.Control(message.Header), peer).Pack(new RoomMessage
        {
            Name = room.Name,
            RoomId = GuidBytes.ToArray(room.Id),
            Members = (uint)members,
        }));

    private bool TryReadRoom(RelayPeerState peer, in ProtoMessage message, out RoomMessage request)
    {
        try
        {
            request = message.Unpack<RoomMessage>();
            return true;
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            request = null!;
            Refuse(peer, in message, RelayStatus.InvalidRequest, "Not a Room message: " + e.Message);
            return false;
        }
    }

    /// <summary>Sends the peer list now, or when the snapshot interval since the last one has passed (one pending at most).</summary>
    private void RequestSnapshot(RelayPeerState peer)
    {
        var interval = (long)_relay.Limits.SnapshotInterval.TotalMilliseconds;
        lock (_snapshotLock)
        {
            if (_snapshotDue)
                return;
            var wait = peer.LastSnapshot + interval - Milliseconds.Now;
            if (wait > 0)
            {
                _snapshotDue = true;
                _snapshotDeadline ??= new Deadline(static state => ((RelaySession)state!).SendDeferredSnapshot(), this);
                _snapshotDeadline.ArmAfter(TimeSpan.FromMilliseconds(wait));
                return;
            }

            peer.LastSnapshot = Milliseconds.Now;
        }

        SendAsync(To(RelayServer.Control(RelayKinds.Snapshot), peer), _relay.Snapshot());
    }

    private void DisarmSnapshot()
    {
        lock (_snapshotLock)
            _snapshotDeadline?.Disarm();
    }

    private void SendDeferredSnapshot()
    {
        // On the clock's thread: the list is built on the pool instead, the clock must not wait.
        System.Threading.ThreadPool.QueueUserWorkItem(static session =>
        {
            if (session._peer is not { HasLeft: false } peer)
                return;
            lock (session._snapshotLock)
            {
                session._snapshotDue = false;
                peer.LastSnapshot = Milliseconds.Now;
            }

            session.SendAsync(To(RelayServer.Control(RelayKinds.Snapshot), peer), session._relay.Snapshot());
        }, this, preferLocal: false);
    }

    private static MessageEnvelope To(MessageEnvelope envelope, RelayPeerState peer)
    {
        envelope.To = peer.Id;
        return envelope;
    }

    /// <summary>Valid UTF-8 (it came as a protobuf string, so it is), no control characters, within <paramref name="maxBytes"/>.</summary>
    private static bool IsValidName(string name, int maxBytes, bool allowEmpty, out string why)
    {
        why = string.Empty;
        if (name.Length == 0)
        {
            why = "is empty.";
            return allowEmpty;
        }

        if (s_strictUtf8.GetByteCount(name) > maxBytes)
        {
            why = $"is longer than {maxBytes} UTF-8 bytes.";
            return false;
        }

        foreach (var c in name)
        {
            if (char.IsControl(c))
            {
                why = "holds a control character.";
                return false;
            }
        }

        return true;
    }
}
