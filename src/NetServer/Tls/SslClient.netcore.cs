using System.Net.Security;
using NetServer.Tls;

namespace NetServer;

/// <summary>
/// A TLS client: a TCP client that runs TLS over the same engine. It validates the server's
/// certificate (chain and host name, see <see cref="SslContext"/>) unless told otherwise.
/// <c>Connect()</c> returns after the handshake; <c>ConnectAsync()</c> raises OnHandshaked
/// (or OnHandshakeFailed) later; <c>ConnectAsync(CancellationToken)</c> completes after the handshake.
/// </summary>
public class SslClient : TcpClientBase
{
    private TlsInfo? _tls;
    private string _targetHost;

    /// <summary>A client for <paramref name="address"/>:<paramref name="port"/>.</summary>
    public SslClient(SslContext context, IPAddress address, int port)
        : this(context, new IPEndPoint(address, port))
    {
    }

    /// <summary>A client for an IP address or host name (resolved at each connect) given as text.</summary>
    public SslClient(SslContext context, string address, int port)
        : this(context, EndPoints.Parse(address, port))
    {
    }

    /// <summary>A client for a host name, resolved at each connect.</summary>
    public SslClient(SslContext context, DnsEndPoint endpoint)
        : this(context, (EndPoint)endpoint)
    {
    }

    /// <summary>A client for <paramref name="endpoint"/>.</summary>
    public SslClient(SslContext context, IPEndPoint endpoint)
        : this(context, (EndPoint)endpoint)
    {
    }

    private SslClient(SslContext context, EndPoint endpoint)
        : base(endpoint)
    {
        if (context is null)
            ThrowHelper.ThrowArgumentNull(nameof(context));
        Context = context;
        _targetHost = Address;
    }

    /// <summary>The TLS settings.</summary>
    public SslContext Context { get; }

    /// <summary>
    /// The server name the certificate must match, also sent as SNI when it is a host name
    /// (default: the address the client was created with).
    /// </summary>
    public string TargetHost
    {
        get => _targetHost;
        set
        {
            if (string.IsNullOrEmpty(value))
                ThrowHelper.ThrowArgumentNull(nameof(TargetHost));
            _targetHost = value;
        }
    }

    /// <summary>True while connected and the handshake is still running.</summary>
    public bool IsHandshaking => CurrentConnection is { IsHandshaking: true, IsOpen: true };

    /// <summary>True once the handshake succeeded, while connected.</summary>
    public bool IsHandshaked => CurrentConnection is { IsSecured: true, IsOpen: true };

    /// <summary>What the handshake negotiated (protocol, cipher, ALPN, the server's certificate); null before it succeeded.</summary>
    public TlsInfo? Tls => CurrentConnection is { IsSecured: true } ? _tls : null;

    private protected override SecureLayer CreateSecureLayer() => new TlsLayer(Context, _targetHost);

    internal override void InvokeHandshaking() => OnHandshaking();

    internal override void InvokeHandshaked()
    {
        _tls = new TlsInfo((SslStream)CurrentConnection!.SecureStream!, _targetHost);
        OnHandshaked();
    }

    internal override void InvokeHandshakeFailed(Exception exception) => OnHandshakeFailed(exception);

    /// <summary>Called when the TLS handshake starts (after OnConnected).</summary>
    protected virtual void OnHandshaking()
    {
    }

    /// <summary>Called when the TLS handshake succeeded, before anything is received; <see cref="Tls"/> tells what was negotiated.</summary>
    protected virtual void OnHandshaked()
    {
    }

    /// <summary>
    /// Called when the TLS handshake failed or timed out, with the reason (for example an
    /// <see cref="System.Security.Authentication.AuthenticationException"/> for a certificate that
    /// is untrusted, expired or for another host); the connection is then closed.
    /// </summary>
    protected virtual void OnHandshakeFailed(Exception exception)
    {
    }
}
