using System;
using System.Net;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Protobuf.Requests;

namespace NetServer.Protobuf;

/// <summary>
/// A client of protobuf envelopes over TCP, TLS or Unix domain sockets (the constructor chooses),
/// built on <see cref="MessageClient"/>. Ask the server with <c>RequestAsync</c> (replies are
/// matched by correlation id, in any order); handle the other envelopes it sends in
/// <see cref="OnMessage(in ProtoMessage)"/>, or await them with <see cref="ReceiveEnvelopeAsync"/>.
/// </summary>
/// <remarks>
/// Requests outlive reconnects of the client object, not of the connection: when a connection
/// ends, every request still pending fails with an <see cref="System.IO.IOException"/> naming the
/// <see cref="DisconnectReason"/>. A message that is not a valid envelope closes the connection
/// with <see cref="DisconnectReason.ProtocolError"/>.
/// </remarks>
public class ProtoClient : MessageClient
{
    private readonly ProtoChannel _channel;

    /// <summary>A TCP client for <paramref name="address"/>:<paramref name="port"/>.</summary>
    public ProtoClient(IPAddress address, int port)
        : base(address, port) => _channel = new ProtoChannel(this);

    /// <summary>A TCP client for an IP address or host name given as text.</summary>
    public ProtoClient(string address, int port)
        : base(address, port) => _channel = new ProtoChannel(this);

    /// <summary>A client for <paramref name="endpoint"/>: TCP for an IP or DNS endpoint, a Unix domain socket for a <c>UnixDomainSocketEndPoint</c>.</summary>
    public ProtoClient(EndPoint endpoint)
        : base(endpoint) => _channel = new ProtoChannel(this);

    /// <summary>A TLS client for <paramref name="address"/>:<paramref name="port"/>, validating the server with <paramref name="context"/> (on by default).</summary>
    public ProtoClient(SslContext context, IPAddress address, int port)
        : base(context, address, port) => _channel = new ProtoChannel(this);

    /// <summary>A TLS client for a host name or address given as text (the name the server certificate must match).</summary>
    public ProtoClient(SslContext context, string address, int port)
        : base(context, address, port) => _channel = new ProtoChannel(this);

    /// <summary>A TLS client for <paramref name="endpoint"/> (an IP or DNS endpoint), validating the server with <paramref name="context"/>.</summary>
    public ProtoClient(SslContext context, EndPoint endpoint)
        : base(context, endpoint) => _channel = new ProtoChannel(this);

    /// <summary>Requests sent still awaiting their reply.</summary>
    public int PendingRequests => _channel.Requests.Count;

    /// <summary>Replies received that matched no pending request (late after a timeout or cancel, or unknown), dropped.</summary>
    public long LateReplies => _channel.Requests.LateReplies;

    internal RequestTable Requests => _channel.Requests;

    /// <summary>Sends <paramref name="envelope"/> (its <see cref="MessageEnvelope.Payload"/> as the payload), serialized straight into the send queue; false if not connected or refused by the send limit.</summary>
    public bool SendAsync(MessageEnvelope envelope) => _channel.Send(envelope);

    /// <summary>Sends <paramref name="envelope"/> with <paramref name="payload"/> serialized by protobuf-net straight into the send queue.</summary>
    public bool SendAsync<T>(MessageEnvelope envelope, T payload) => _channel.Send(envelope, payload);

    /// <summary>Sends <paramref name="envelope"/> with backpressure: completes once the send limit accepts it (false if the connection closed).</summary>
    public ValueTask<bool> SendAsync(MessageEnvelope envelope, CancellationToken cancellationToken) => _channel.SendAsync(envelope, cancellationToken);

    /// <summary>Answers a request of the server with <paramref name="payload"/> (sender and addressee swapped, header and request id kept).</summary>
    public bool Reply<T>(in ProtoMessage request, T payload) => _channel.Reply(in request, payload);

    /// <summary>Answers a request of the server with <paramref name="payload"/>'s bytes.</summary>
    public bool ReplyBytes(in ProtoMessage request, ReadOnlySpan<byte> payload) => _channel.ReplyBytes(in request, payload);

    /// <summary>Answers a request of the server with an envelope of your own (the request's id and the reply flag added).</summary>
    public bool Reply(in ProtoMessage request, MessageEnvelope reply) => _channel.Reply(in request, reply);

    /// <summary>Answers a request kept as an owned copy (<see cref="ProtoMessage.ToEnvelope"/>), later or from another thread, with <paramref name="payload"/>.</summary>
    public bool Reply<T>(MessageEnvelope request, T payload) => _channel.Reply(request, payload);

    /// <summary>Answers a request kept as an owned copy with an envelope of your own (the request's id and the reply flag added).</summary>
    public bool Reply(MessageEnvelope request, MessageEnvelope reply) => _channel.Reply(request, reply);

    /// <summary>Sends <paramref name="request"/> (its own payload) and awaits the reply, an owned copy (outcomes as <see cref="RequestAsync{TRequest, TResponse}"/>).</summary>
    public Task<MessageEnvelope> RequestAsync(MessageEnvelope request, TimeSpan timeout, CancellationToken cancellationToken = default) =>
        _channel.RequestAsync<object?, MessageEnvelope>(request, null, typed: false, ReplyReaders.Envelope, timeout, cancellationToken);

    /// <summary>
    /// Sends <paramref name="request"/> with <paramref name="payload"/> and awaits the reply's
    /// payload, deserialized as <typeparamref name="TResponse"/> when it arrives.
    /// </summary>
    /// <exception cref="TimeoutException">No reply within <paramref name="timeout"/> (a late one is dropped and counted in <see cref="LateReplies"/>).</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> fired first.</exception>
    /// <exception cref="System.IO.IOException">The connection closed (the message names the <see cref="DisconnectReason"/>), or the request could not be sent.</exception>
    /// <exception cref="System.IO.InvalidDataException">The reply's payload is not a <typeparamref name="TResponse"/>.</exception>
    public Task<TResponse> RequestAsync<TRequest, TResponse>(MessageEnvelope request, TRequest payload, TimeSpan timeout, CancellationToken cancellationToken = default) =>
        _channel.RequestAsync(request, payload, typed: true, ReplyReaders.Payload<TResponse>(), timeout, cancellationToken);

    /// <summary>
    /// The next envelope the server sent (not a reply to a request), as an owned copy: at once if
    /// one is queued, otherwise when one arrives. Only while <see cref="OnMessage(in ProtoMessage)"/>
    /// is not overridden (it queues them).
    /// </summary>
    /// <exception cref="System.IO.IOException">Not connected, or the connection closed, and nothing is left.</exception>
    public async ValueTask<MessageEnvelope> ReceiveEnvelopeAsync(CancellationToken cancellationToken = default)
    {
        using var message = await ReceiveAsync(cancellationToken).ConfigureAwait(false);
        return ToEnvelope(message.Span);
    }

    /// <summary>
    /// Called with every envelope received that is not a reply to a request, in order; valid only
    /// during the call. By default it queues a copy for <see cref="ReceiveEnvelopeAsync"/>.
    /// </summary>
    protected virtual void OnMessage(in ProtoMessage message) => base.OnMessage(message.Raw);

    /// <inheritdoc/>
    protected sealed override void OnMessage(ReadOnlySpan<byte> message)
    {
        if (_channel.Accept(message, out var envelope))
            OnMessage(in envelope);
    }


    private static MessageEnvelope ToEnvelope(ReadOnlySpan<byte> bytes) => ProtoMessage.Parse(bytes).ToEnvelope();
}
