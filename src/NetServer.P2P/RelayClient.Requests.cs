using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Threading;
using System.Threading.Tasks;
using NetServer.P2P.Client;
using NetServer.P2P.Internal;
using NetServer.P2P.Wire;
using NetServer.P2P.Wire.Contracts;
using NetServer.Protobuf;

namespace NetServer.P2P;

// Awaited requests, to a peer through the relay and to the relay itself. Built on the envelope
// client's RequestAsync (correlation ids, deadlines on the shared clock, cancellation, failure
// when the connection ends); added here: the relay's refusal (relay/status as the reply) fails the
// request at once with its status, and a peer's departure fails the requests waiting for it.
public partial class RelayClient
{
    /// <summary>
    /// Sends <paramref name="request"/> (its own payload) to <paramref name="peer"/> and awaits the
    /// reply, an owned copy (<c>From</c> is the peer). Outcomes as
    /// <see cref="RequestAsync{TRequest, TResponse}"/>. Sets the envelope's <c>To</c>.
    /// </summary>
    public Task<MessageEnvelope> RequestAsync(Guid peer, MessageEnvelope request, TimeSpan timeout, CancellationToken cancellationToken = default)
    {
        Guard.NotNull(request, nameof(request));
        request.To = peer;
        CheckSize(request.Payload.Length);
        return AskPeerAsync(peer, request, timeout, cancellationToken);
    }

    /// <summary>
    /// Sends <paramref name="request"/> with <paramref name="payload"/> to <paramref name="peer"/>
    /// through the relay and awaits the reply's payload as <typeparamref name="TResponse"/>. The
    /// envelope itself is not changed (a copy is sent).
    /// </summary>
    /// <exception cref="RelayException">The relay refused it (<see cref="RelayStatus.UnknownPeer"/>,
    /// <see cref="RelayStatus.RateLimited"/>, <see cref="RelayStatus.ResourceLimitExceeded"/>, ...),
    /// or the peer left while it waited (<see cref="RelayStatus.PeerLeft"/>).</exception>
    /// <exception cref="TimeoutException">No reply within <paramref name="timeout"/>.</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> fired first.</exception>
    /// <exception cref="IOException">The connection to the relay closed, or the request could not be sent.</exception>
    /// <exception cref="InvalidDataException">The reply's payload is not a <typeparamref name="TResponse"/>.</exception>
    public async Task<TResponse> RequestAsync<TRequest, TResponse>(Guid peer, MessageEnvelope request, TRequest payload, TimeSpan timeout, CancellationToken cancellationToken = default)
    {
        Guard.NotNull(request, nameof(request));
        var copy = Copy(request, peer).Pack(payload);
        CheckSize(copy.Payload.Length);
        var reply = await AskPeerAsync(peer, copy, timeout, cancellationToken).ConfigureAwait(false);
        try
        {
            return reply.Unpack<TResponse>();
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            throw new InvalidDataException($"The reply of peer {peer} could not be read as {typeof(TResponse).Name}: {e.Message}", e);
        }
    }

    /// <summary>
    /// The round-trip time to <paramref name="peer"/> through the relay (a p2p/ping request its
    /// client answers by itself); recorded in its <see cref="GetStatistics">statistics</see>.
    /// </summary>
    /// <exception cref="RelayException">The relay refused it, or the peer left.</exception>
    /// <exception cref="TimeoutException">No answer within <paramref name="timeout"/>.</exception>
    public async Task<TimeSpan> PingAsync(Guid peer, TimeSpan timeout, CancellationToken cancellationToken = default)
    {
        var start = Stopwatch.GetTimestamp();
        await AskPeerAsync(peer, new MessageEnvelope(RelayKinds.PeerPing) { To = peer }, timeout, cancellationToken).ConfigureAwait(false);
        var elapsed = TimeSpan.FromMilliseconds(Milliseconds.Between(start, Stopwatch.GetTimestamp()));
        if (_links.TryGetValue(peer, out var link))
            link.RecordRoundTrip(elapsed);
        return elapsed;
    }

    /// <summary>The round-trip time to the relay (relay/ping), also kept in <see cref="RelayRoundTrip"/>.</summary>
    public async Task<TimeSpan> PingRelayAsync(TimeSpan timeout, CancellationToken cancellationToken = default)
    {
        var start = Stopwatch.GetTimestamp();
        await AskRelayAsync(new MessageEnvelope(RelayKinds.Ping), timeout, cancellationToken).ConfigureAwait(false);
        var elapsed = TimeSpan.FromMilliseconds(Milliseconds.Between(start, Stopwatch.GetTimestamp()));
        _relayRoundTrip = elapsed;
        return elapsed;
    }

    /// <summary>Joins the room named <paramref name="name"/> (made if it does not exist); joining a room this client is in already returns it again.</summary>
    /// <exception cref="RelayException"><see cref="RelayStatus.TooManyRooms"/>, <see cref="RelayStatus.RoomFull"/>, <see cref="RelayStatus.InvalidRequest"/> (the name).</exception>
    public async Task<RelayRoom> JoinRoomAsync(string name, CancellationToken cancellationToken = default)
    {
        Guard.NotNull(name, nameof(name));
        var reply = await AskRelayAsync(new MessageEnvelope(RelayKinds.RoomJoin).Pack(new RoomMessage { Name = name }), ControlTimeout, cancellationToken).ConfigureAwait(false);
        var room = reply.Unpack<RoomMessage>();
        return new RelayRoom(GuidBytes.Read(room.RoomId), room.Name ?? name) { MembersAtJoin = (int)room.Members };
    }

    /// <summary>Leaves <paramref name="room"/>.</summary>
    /// <exception cref="RelayException"><see cref="RelayStatus.NotMember"/>.</exception>
    public async Task LeaveRoomAsync(RelayRoom room, CancellationToken cancellationToken = default)
    {
        Guard.NotNull(room, nameof(room));
        var request = new RoomMessage { Name = room.Name, RoomId = GuidBytes.ToArray(room.Id) };
        await AskRelayAsync(new MessageEnvelope(RelayKinds.RoomLeave).Pack(request), ControlTimeout, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>The ids of <paramref name="room"/>'s members now (this client included).</summary>
    /// <exception cref="RelayException"><see cref="RelayStatus.NotMember"/>.</exception>
    public async Task<IReadOnlyList<Guid>> GetRoomMembersAsync(RelayRoom room, CancellationToken cancellationToken = default)
    {
        Guard.NotNull(room, nameof(room));
        var request = new RoomMessage { Name = room.Name, RoomId = GuidBytes.ToArray(room.Id) };
        var reply = await AskRelayAsync(new MessageEnvelope(RelayKinds.RoomMembers).Pack(request), ControlTimeout, cancellationToken).ConfigureAwait(false);
        var members = reply.Unpack<RoomMembersMessage>().Members;
        var ids = new Guid[members.Count];
        for (var i = 0; i < ids.Length; i++)
            ids[i] = GuidBytes.Read(members[i]);
        return ids;
    }

    private async Task<MessageEnvelope> AskPeerAsync(Guid peer, MessageEnvelope request, TimeSpan timeout, CancellationToken cancellationToken)
    {
        // A peer not in the list yet (its delta is on the way) gets its link now, so its departure fails this request too.
        var link = _links.GetOrAdd(peer, static id => new PeerLink(id));
        link.CountRequest();
        link.CountSent(request.Payload.Length + MessageProtocol.HeaderSize);
        var departed = link.Departed;
        using var linked = departed.CanBeCanceled ? CancellationTokenSource.CreateLinkedTokenSource(cancellationToken, departed) : null;
        MessageEnvelope reply;
        try
        {
            reply = await _connection.RequestAsync(request, timeout, linked?.Token ?? cancellationToken).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (departed.IsCancellationRequested && !cancellationToken.IsCancellationRequested)
        {
            link.CountFailedRequest();
            throw new RelayException(RelayStatus.PeerLeft, $"Peer {peer} left before it answered.");
        }
        catch
        {
            link.CountFailedRequest();
            throw;
        }

        if (reply.From == RelayAddresses.Relay)
        {
            link.CountFailedRequest();
            var refusal = Refusal(reply);
            if (refusal.Status == RelayStatus.UnknownPeer && !_view.TryGet(peer, out _))
                _links.TryRemove(peer, out _); // no such peer: no link kept for it
            throw refusal;
        }

        // The relay passes a reply only from the peer asked; a client checks anyway.
        if (reply.From != peer)
        {
            link.CountFailedRequest();
            throw new RelayException(RelayStatus.UnexpectedReply, $"The reply came from {reply.From}, not from {peer}.");
        }

        return reply;
    }

    private async Task<MessageEnvelope> AskRelayAsync(MessageEnvelope request, TimeSpan timeout, CancellationToken cancellationToken)
    {
        request.To = RelayAddresses.Relay;
        var reply = await _connection.RequestAsync(request, timeout, cancellationToken).ConfigureAwait(false);
        if (reply.From != RelayAddresses.Relay)
            throw new RelayException(RelayStatus.UnexpectedReply, $"A reply to a request to the relay came from {reply.From}.");
        if (reply.Header == RelayKinds.Status)
            throw Refusal(reply);
        return reply;
    }

    private static RelayException Refusal(MessageEnvelope reply)
    {
        var notice = reply.Unpack<StatusMessage>();
        var status = (RelayStatus)notice.Status;
        return new RelayException(status, notice.Detail ?? status.ToString());
    }

    private static MessageEnvelope Copy(MessageEnvelope request, Guid peer)
    {
        var copy = new MessageEnvelope
        {
            Id = request.Id,
            To = peer,
            Header = request.Header,
            Timestamp = request.Timestamp,
            Flags = request.Flags,
        };
        foreach (var property in request.Properties)
            copy.Properties.Add(property);
        return copy;
    }
}
