using System;
using System.Threading;
using NetServer.P2P.Client;
using NetServer.P2P.Wire;
using NetServer.P2P.Wire.Contracts;
using NetServer.Protobuf;

namespace NetServer.P2P;

// What arrives: the relay's control messages (From empty) keep the peer list and report
// refusals; everything else comes from a peer, stamped by the relay, and goes to OnMessage
// (after p2p/ping requests are answered here). All on the connection's receive thread.
public partial class RelayClient
{
    private long _deltasReceived;
    private long _snapshotsReceived;
    private int _dropDeltas;

    /// <summary>relay/peer-joined and relay/peer-left received (for tests: no full list is pushed on a change).</summary>
    internal long DeltasReceived => Volatile.Read(ref _deltasReceived);

    /// <summary>relay/snapshot received (the welcome's list not counted).</summary>
    internal long SnapshotsReceived => Volatile.Read(ref _snapshotsReceived);

    /// <summary>For tests: the next this many deltas are dropped as if lost, so the one after shows a gap.</summary>
    internal int DropDeltasForTests
    {
        get => Volatile.Read(ref _dropDeltas);
        set => Volatile.Write(ref _dropDeltas, value);
    }

    /// <summary>The connection's receive hook: every envelope that is not a reply to a request.</summary>
    internal void Receive(in ProtoMessage message)
    {
        if (message.From == RelayAddresses.Relay)
        {
            OnControl(in message);
            return;
        }

        if (_links.TryGetValue(message.From, out var link))
            link.CountReceived(message.Raw.Length);
        if (message.IsRequest && message.HeaderUtf8.SequenceEqual(RelayKinds.PeerPingUtf8))
        {
            _connection.ReplyBytes(in message, default);
            return;
        }

        if (OnPunchMessage(in message))
            return;

        OnMessage(in message);
    }

    private void OnControl(in ProtoMessage message)
    {
        switch (RelayKinds.Parse(message.HeaderUtf8))
        {
            case RelayKind.Welcome:
                OnWelcome(message.Unpack<WelcomeMessage>());
                break;
            case RelayKind.PeerJoined or RelayKind.PeerLeft when CountDelta():
                break;
            case RelayKind.PeerJoined:
                var joined = message.Unpack<PeerJoinedMessage>();
                AfterDelta(_view.OnJoined(joined.Version, joined.Peer, _changes));
                break;
            case RelayKind.PeerLeft:
                var left = message.Unpack<PeerLeftMessage>();
                AfterDelta(_view.OnLeft(left.Version, GuidBytes.Read(left.PeerId), _changes));
                break;
            case RelayKind.Snapshot:
                Volatile.Write(ref _snapshotsReceived, _snapshotsReceived + 1);
                _snapshotAsked = false;
                var snapshot = message.Unpack<SnapshotMessage>();
                var gap = _view.OnSnapshot(snapshot, _changes);
                RaiseChanges();
                if (!gap)
                    OnPeersSynchronized(snapshot.Version);
                AskSnapshot(gap);
                break;
            case RelayKind.Status:
                OnStatus(message.Unpack<StatusMessage>());
                break;
            case RelayKind.UdpSession:
                InstallPair(message.Unpack<UdpPairMessage>(), replaces: true);
                break;
            case RelayKind.UdpDatagram:
                _udp?.ReceiveCarried(message.Payload);
                break;
            default:
                break; // a kind this client does not know (a newer relay's): ignored, as protobuf ignores unknown fields
        }
    }

    /// <summary>Counts a delta; true when a test asked for it to be dropped.</summary>
    private bool CountDelta()
    {
        Volatile.Write(ref _deltasReceived, _deltasReceived + 1);
        if (Volatile.Read(ref _dropDeltas) <= 0)
            return false;
        Interlocked.Decrement(ref _dropDeltas);
        return true;
    }

    private void OnWelcome(WelcomeMessage welcome)
    {
        var limits = welcome.Limits ?? new LimitsMessage();
        _registration = new Registration(GuidBytes.Read(welcome.PeerId), GuidBytes.Read(welcome.SessionId), new RelayLimits
        {
            MaxMessageSize = (int)Math.Min(limits.MaxMessageSize, int.MaxValue),
            MessageRate = (int)Math.Min(limits.MessageRate, int.MaxValue),
            ByteRate = (long)Math.Min(limits.ByteRate, long.MaxValue),
            MaxRooms = (int)Math.Min(limits.MaxRooms, int.MaxValue),
            MaxRoomMembers = (int)Math.Min(limits.MaxRoomMembers, int.MaxValue),
            MaxRequestsInFlight = (int)Math.Min(limits.MaxRequestsInFlight, int.MaxValue),
            MaxNameLength = (int)Math.Min(limits.MaxNameLength, int.MaxValue),
        });
        _registrationDeadline.Disarm();
        OpenUdp(welcome);
        OnRegistered();
        var snapshot = welcome.Peers ?? new SnapshotMessage();
        var gap = _view.OnSnapshot(snapshot, _changes);
        RaiseChanges();
        if (!gap)
            OnPeersSynchronized(snapshot.Version);
        AskSnapshot(gap);
        Volatile.Read(ref _welcome)?.TrySetResult(true);
    }

    private void OnStatus(StatusMessage notice)
    {
        var status = (RelayStatus)notice.Status;
        var detail = notice.Detail ?? status.ToString();
        if (_registration is null)
        {
            // Refused before a welcome: the registration failed (the relay closes the connection).
            Volatile.Read(ref _welcome)?.TrySetException(new RelayException(status, detail));
            return;
        }

        OnDeliveryFailed(new RelayDeliveryFailure(status, GuidBytes.Read(notice.MessageId), GuidBytes.Read(notice.To), detail));
    }

    private void AfterDelta(bool gap)
    {
        RaiseChanges();
        AskSnapshot(gap);
    }

    /// <summary>Asks the relay for the list once per gap (it answers within its snapshot interval).</summary>
    private void AskSnapshot(bool gap)
    {
        if (!gap || _snapshotAsked)
            return;
        _snapshotAsked = true;
        var request = new MessageEnvelope(RelayKinds.SnapshotRequest) { To = RelayAddresses.Relay };
        _connection.SendAsync(request, new SnapshotRequestMessage { KnownVersion = _view.Version });
    }

    private void RaiseChanges()
    {
        try
        {
            foreach (var change in _changes)
            {
                if (change.Joined)
                {
                    _links.GetOrAdd(change.Peer.Id, static id => new PeerLink(id));
                    OnPeerJoined(change.Peer);
                }
                else
                {
                    if (_links.TryRemove(change.Peer.Id, out var link))
                        link.Depart();
                    ClosePair(change.Peer.Id);
                    OnPeerLeft(change.Peer);
                }
            }
        }
        finally
        {
            _changes.Clear(); // a hook that threw closes the connection; nothing is raised twice
        }
    }
}
