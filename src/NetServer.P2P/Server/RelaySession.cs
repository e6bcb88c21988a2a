using System;
using NetServer.P2P.Internal;
using NetServer.Protobuf;

namespace NetServer.P2P.Server;

/// <summary>
/// One connection to the relay. Before registering it may send only relay/register (anything else
/// closes it), and must do so within the registration timeout of its accept. Registered, its
/// envelopes are control messages (To empty), or routed to a peer, a room or everyone
/// (RelaySession.Forward.cs). Its peer id is bound to this session for its life.
/// </summary>
internal sealed partial class RelaySession : ProtoSession
{
    private static readonly Action<object?> s_registrationExpired = static state => ((RelaySession)state!).OnRegistrationExpired();

    private readonly RelayServer _relay;
    private readonly Deadline _registration;
    private volatile RelayPeerState? _peer;

    public RelaySession(RelayHost host, RelayServer relay)
        : base(host)
    {
        _relay = relay;
        _registration = new Deadline(s_registrationExpired, this);
        PassesUnmatchedReplies = true; // peers' replies to each other's requests are routed, not taken as the relay's own

    }

    public RelayPeerState? Peer => _peer;

    protected override void OnAttached()
    {
        var limits = _relay.Limits;
        if (Connection is { } connection)
        {
            // Routed messages stop at the destination limit; the relay's own messages (deltas,
            // statuses) have the reserve above it, and one envelope of the largest size still fits.
            connection.OptionSendBufferLimit = limits.DestinationQueueLimit + limits.ControlQueueReserve + limits.MaxMessageSize;
        }

        if (limits.RegistrationTimeout != System.Threading.Timeout.InfiniteTimeSpan)
            _registration.ArmAfter(limits.RegistrationTimeout);
    }

    protected override void OnMessage(in ProtoMessage message)
    {
        Outbox.Gather();
        var peer = _peer;
        if (peer is null)
            OnUnregistered(in message);
        else if (message.To == RelayAddresses.Relay)
            OnControl(peer, in message);
        else
            Route(peer, in message);
    }

    /// <summary>What this read routed leaves now: one send per addressee.</summary>
    protected override void OnMessagesDelivered() => Outbox.SendGathered();

    protected override void OnDisconnected(DisconnectReason reason)
    {
        _registration.Disarm();
        DisarmSnapshot();
        base.OnDisconnected(reason);
        if (_peer is { } peer)
            _relay.Depart(peer, reason);
    }

    private void OnRegistrationExpired()
    {
        if (_peer is null)
            Connection?.DisconnectOnProtocolError($"Not registered within {_relay.Limits.RegistrationTimeout.TotalSeconds:0.###} s of the connection's accept.");
    }
}
