using System;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Protobuf.Requests;

namespace NetServer.Protobuf;

/// <summary>
/// One connection of a <see cref="ProtoServer"/>: envelopes over length-prefixed messages, on
/// whichever transport the server uses. Override <see cref="OnMessage(in ProtoMessage)"/>; answer
/// requests with <see cref="Reply{T}(in ProtoMessage, T)"/>; send with <c>SendAsync</c>; ask the
/// peer with <c>RequestAsync</c>.
/// </summary>
/// <remarks>
/// A message that is not a valid envelope closes the connection with
/// <see cref="DisconnectReason.ProtocolError"/> (the reason is in the connection's
/// <c>DisconnectException</c>); the server and its other sessions go on. When the connection
/// ends, every request still awaiting its reply fails (whatever <c>OnDisconnected</c> overrides do).
/// </remarks>
public class ProtoSession : MessageSession
{
    private readonly ProtoChannel _channel;

    /// <summary>A session of <paramref name="server"/>.</summary>
    public ProtoSession(ProtoServer server)
        : base(server) => _channel = new ProtoChannel(this);

    /// <summary>The server that accepted this session.</summary>
    public new ProtoServer Server => (ProtoServer)base.Server;

    /// <summary>Requests sent by this session still awaiting their reply.</summary>
    public int PendingRequests => _channel.Requests.Count;

    /// <summary>Replies received that matched no pending request (late after a timeout or cancel, or unknown), dropped.</summary>
    public long LateReplies => _channel.Requests.LateReplies;

    internal RequestTable Requests => _channel.Requests;

    /// <summary>
    /// When true, a reply (response flag) that matches none of this session's own pending requests
    /// goes to <see cref="OnMessage(in ProtoMessage)"/> like any other envelope, instead of being
    /// dropped and counted in <see cref="LateReplies"/>: for a session that routes envelopes between
    /// its peers (a broker, a relay), through which replies to other connections' requests pass.
    /// Replies to the session's own requests still complete them. Default false.
    /// </summary>
    protected bool PassesUnmatchedReplies { get; set; }

    /// <summary>Sends <paramref name="envelope"/> (its <see cref="MessageEnvelope.Payload"/> as the payload), serialized straight into the send queue; false if not connected or refused by the send limit.</summary>
    public bool SendAsync(MessageEnvelope envelope) => _channel.Send(envelope);

    /// <summary>Sends <paramref name="envelope"/> with <paramref name="payload"/> serialized by protobuf-net straight into the send queue (no intermediate array).</summary>
    public bool SendAsync<T>(MessageEnvelope envelope, T payload) => _channel.Send(envelope, payload);

    /// <summary>Sends <paramref name="envelope"/> with backpressure: completes once the send limit accepts it (false if the connection closed).</summary>
    public ValueTask<bool> SendAsync(MessageEnvelope envelope, CancellationToken cancellationToken) => _channel.SendAsync(envelope, cancellationToken);

    /// <summary>Answers <paramref name="request"/> with <paramref name="payload"/>: the reply swaps sender and addressee, keeps the header, and carries the request's id.</summary>
    /// <exception cref="ArgumentException"><paramref name="request"/> is not a request.</exception>
    public bool Reply<T>(in ProtoMessage request, T payload) => _channel.Reply(in request, payload);

    /// <summary>Answers <paramref name="request"/> with <paramref name="payload"/>'s bytes (see <see cref="Reply{T}(in ProtoMessage, T)"/>).</summary>
    public bool ReplyBytes(in ProtoMessage request, ReadOnlySpan<byte> payload) => _channel.ReplyBytes(in request, payload);

    /// <summary>Answers <paramref name="request"/> with an envelope of your own (its fields as given, the request's id and the reply flag added).</summary>
    public bool Reply(in ProtoMessage request, MessageEnvelope reply) => _channel.Reply(in request, reply);

    /// <summary>Answers a request kept as an owned copy (<see cref="ProtoMessage.ToEnvelope"/>), later or from another thread, with <paramref name="payload"/>.</summary>
    public bool Reply<T>(MessageEnvelope request, T payload) => _channel.Reply(request, payload);

    /// <summary>Answers a request kept as an owned copy with an envelope of your own (the request's id and the reply flag added).</summary>
    public bool Reply(MessageEnvelope request, MessageEnvelope reply) => _channel.Reply(request, reply);

    /// <summary>
    /// Sends <paramref name="request"/> (its own payload) to the peer and awaits the reply, an owned
    /// copy. See <see cref="RequestAsync{TRequest, TResponse}"/> for the outcomes.
    /// </summary>
    public Task<MessageEnvelope> RequestAsync(MessageEnvelope request, TimeSpan timeout, CancellationToken cancellationToken = default) =>
        _channel.RequestAsync<object?, MessageEnvelope>(request, null, typed: false, ReplyReaders.Envelope, timeout, cancellationToken);

    /// <summary>
    /// Sends <paramref name="request"/> with <paramref name="payload"/> to the peer and awaits the
    /// reply's payload, deserialized as <typeparamref name="TResponse"/> when it arrives. Replies
    /// may come in any order; each is matched by the correlation id this call assigns.
    /// </summary>
    /// <exception cref="TimeoutException">No reply within <paramref name="timeout"/> (a late one is dropped and counted in <see cref="LateReplies"/>).</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> fired first.</exception>
    /// <exception cref="System.IO.IOException">The connection closed (the message names the <see cref="DisconnectReason"/>), or the request could not be sent.</exception>
    /// <exception cref="System.IO.InvalidDataException">The reply's payload is not a <typeparamref name="TResponse"/>.</exception>
    public Task<TResponse> RequestAsync<TRequest, TResponse>(MessageEnvelope request, TRequest payload, TimeSpan timeout, CancellationToken cancellationToken = default) =>
        _channel.RequestAsync(request, payload, typed: true, ReplyReaders.Payload<TResponse>(), timeout, cancellationToken);

    /// <summary>
    /// Called with every envelope received that is not a reply to one of this session's requests,
    /// in order, never concurrently with itself. The message is valid only during the call.
    /// </summary>
    protected virtual void OnMessage(in ProtoMessage message)
    {
    }

    /// <inheritdoc/>
    protected sealed override void OnMessage(ReadOnlySpan<byte> message)
    {
        if (_channel.Accept(message, out var envelope, PassesUnmatchedReplies))
            OnMessage(in envelope);
    }

    /// <summary>Called once, last, when the session disconnected; fails the requests still pending. Overrides must call the base.</summary>
    protected override void OnDisconnected(DisconnectReason reason)
    {
        base.OnDisconnected(reason);
        _channel.Requests.FailAll(reason);
    }
}
