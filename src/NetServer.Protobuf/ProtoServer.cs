using System;
using System.Net;
using NetServer.Protobuf.Internal;

namespace NetServer.Protobuf;

/// <summary>
/// A server of protobuf envelopes over TCP, TLS or Unix domain sockets (the constructor chooses),
/// built on <see cref="MessageServer"/>: each envelope is one length-prefixed message. Each
/// connection gets a <see cref="ProtoSession"/> from <see cref="CreateProtoSession"/>; override it
/// to return your own session type, and override the session's <c>OnMessage(in ProtoMessage)</c>.
/// </summary>
/// <example>
/// <code>
/// class Calculator(ProtoServer server) : ProtoSession(server)
/// {
///     protected override void OnMessage(in ProtoMessage message)
///     {
///         if (message.IsRequest &amp;&amp; message.HeaderEquals("add"))
///             Reply(message, new Sum { Value = message.Unpack&lt;Numbers&gt;().Values.Sum() });
///     }
/// }
/// class CalculatorServer(IPAddress address, int port) : ProtoServer(address, port)
/// {
///     protected override ProtoSession CreateProtoSession() =&gt; new Calculator(this);
/// }
/// </code>
/// </example>
public class ProtoServer : MessageServer
{
    /// <summary>A TCP server on <paramref name="address"/>:<paramref name="port"/> (port 0 picks a free port).</summary>
    public ProtoServer(IPAddress address, int port)
        : base(address, port)
    {
    }

    /// <summary>A TCP server on an IP address or host name given as text.</summary>
    public ProtoServer(string address, int port)
        : base(address, port)
    {
    }

    /// <summary>A server on <paramref name="endpoint"/>: TCP for an IP or DNS endpoint, a Unix domain socket for a <c>UnixDomainSocketEndPoint</c>.</summary>
    public ProtoServer(EndPoint endpoint)
        : base(endpoint)
    {
    }

    /// <summary>A TLS server on <paramref name="address"/>:<paramref name="port"/> with the certificate and policy of <paramref name="context"/>.</summary>
    public ProtoServer(SslContext context, IPAddress address, int port)
        : base(context, address, port)
    {
    }

    /// <summary>A TLS server on <paramref name="endpoint"/> (an IP or DNS endpoint) with the certificate and policy of <paramref name="context"/>.</summary>
    public ProtoServer(SslContext context, EndPoint endpoint)
        : base(context, endpoint)
    {
    }

    /// <summary>
    /// Sends <paramref name="envelope"/> to every connected session: serialized once, its bytes
    /// shared by all sessions (a session whose send queue cannot take it within its send limit is disconnected with
    /// <c>SendBufferFull</c> rather than silently miss it, as with <see cref="MessageServer.Multicast(ReadOnlySpan{byte})"/>).
    /// </summary>
    /// <returns>False if the server is not started.</returns>
    public bool Multicast(MessageEnvelope envelope)
    {
        Guard.NotNull(envelope, nameof(envelope));
        using var writer = PooledBufferWriter.Rent();
        EnvelopeCodec.Write(writer, envelope);
        return Multicast(writer.WrittenSpan);
    }

    /// <summary>Sends <paramref name="envelope"/> with <paramref name="payload"/> (serialized once by protobuf-net) to every connected session.</summary>
    public bool Multicast<T>(MessageEnvelope envelope, T payload)
    {
        Guard.NotNull(envelope, nameof(envelope));
        using var writer = PooledBufferWriter.Rent();
        EnvelopeCodec.Write(writer, envelope, payload);
        return Multicast(writer.WrittenSpan);
    }

    /// <summary>Creates the session of a new connection; override to return your own type.</summary>
    protected virtual ProtoSession CreateProtoSession() => new(this);

    /// <inheritdoc/>
    protected sealed override MessageSession CreateSession() =>
        CreateProtoSession() ?? throw new InvalidOperationException("CreateProtoSession returned null.");
}
