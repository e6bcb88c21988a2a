
namespace NetServer;

/// <summary>
/// A TLS server: a TCP server whose sessions run TLS over the same engine. Each session connects
/// (OnConnecting, OnConnected), then handshakes (OnHandshaking, OnHandshaked, or
/// OnHandshakeFailed and a disconnect), and only then receives, takes multicasts and sends what
/// was queued meanwhile. Subclass it, override <see cref="CreateSession"/> and the hooks you need.
/// </summary>
public class SslServer : TcpServerBase<SslSession>
{
    /// <summary>A server on <paramref name="address"/>:<paramref name="port"/> (port 0 picks a free port).</summary>
    public SslServer(SslContext context, IPAddress address, int port)
        : this(context, new IPEndPoint(address, port))
    {
    }

    /// <summary>A server on an IP address or host name given as text.</summary>
    public SslServer(SslContext context, string address, int port)
        : this(context, EndPoints.Parse(address, port))
    {
    }

    /// <summary>A server on a host name, resolved when it starts.</summary>
    public SslServer(SslContext context, DnsEndPoint endpoint)
        : this(context, (EndPoint)endpoint)
    {
    }

    /// <summary>A server on <paramref name="endpoint"/>.</summary>
    public SslServer(SslContext context, IPEndPoint endpoint)
        : this(context, (EndPoint)endpoint)
    {
    }

    private SslServer(SslContext context, EndPoint endpoint)
        : base(endpoint)
    {
        if (context is null)
            ThrowHelper.ThrowArgumentNull(nameof(context));
        Context = context;
    }

    /// <summary>The TLS settings of every session.</summary>
    public SslContext Context { get; }

    /// <summary>Starts the server; see <see cref="StreamServer{TSession}.Start"/>.</summary>
    /// <exception cref="InvalidOperationException">The context has no certificate for the server to present.</exception>
    public override bool Start()
    {
        if (!Context.HasServerCertificate)
            ThrowHelper.ThrowInvalidOperation("An SslServer needs a certificate: set SslContext.Certificate (with its private key), add one per host name, or set a selection callback.");
        return base.Start();
    }

    /// <summary>Creates an <see cref="SslSession"/>; override to return your own session type.</summary>
    protected override SslSession CreateSession() => new(this);

    internal void RaiseHandshaking(SslSession session) => OnHandshaking(session);

    internal void RaiseHandshaked(SslSession session) => OnHandshaked(session);

    internal void RaiseHandshakeFailed(SslSession session, Exception exception) => OnHandshakeFailed(session, exception);

    /// <summary>Called when a session's handshake starts (after the session's own OnHandshaking).</summary>
    protected virtual void OnHandshaking(SslSession session)
    {
    }

    /// <summary>Called when a session's handshake succeeded (after the session's own OnHandshaked), before it receives anything.</summary>
    protected virtual void OnHandshaked(SslSession session)
    {
    }

    /// <summary>
    /// Called when a session's handshake failed or timed out (after the session's own
    /// OnHandshakeFailed); the session is then disconnected with <see cref="DisconnectReason.HandshakeFailed"/>.
    /// The server keeps serving other clients.
    /// </summary>
    protected virtual void OnHandshakeFailed(SslSession session, Exception exception)
    {
    }
}
