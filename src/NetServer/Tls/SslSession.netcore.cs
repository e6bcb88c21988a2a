using System.Net.Security;
using NetServer.Tls;

namespace NetServer;

/// <summary>
/// One TLS connection accepted by an <see cref="SslServer"/>: the session engine over TLS.
/// Hooks run in the order OnConnecting, OnConnected, OnHandshaking, OnHandshaked, then
/// OnReceived/OnSent/OnEmpty, and OnDisconnected last. Sends made before the handshake is over
/// are queued and go out, encrypted, once it succeeds.
/// </summary>
public class SslSession : StreamSession
{
    private TlsInfo? _tls;

    /// <summary>A session of <paramref name="server"/>.</summary>
    public SslSession(SslServer server)
        : base(server) => Server = server;

    /// <summary>The server this session belongs to.</summary>
    public SslServer Server { get; }

    /// <summary>True once the handshake succeeded, while connected.</summary>
    public bool IsHandshaked => CurrentConnection is { IsSecured: true, IsOpen: true };

    /// <summary>What the handshake negotiated (protocol, cipher, ALPN, the client's certificate); null before it succeeded.</summary>
    public TlsInfo? Tls => CurrentConnection is { IsSecured: true } ? _tls : null;

    private protected override SecureLayer CreateSecureLayer() => new TlsLayer(Server.Context, targetHost: null);

    internal override void InvokeHandshaking()
    {
        OnHandshaking();
        Server.RaiseHandshaking(this);
    }

    internal override void InvokeHandshaked()
    {
        _tls = new TlsInfo((SslStream)CurrentConnection!.SecureStream!, hostName: null);
        OnHandshaked();
        Server.RaiseHandshaked(this);
    }

    internal override void InvokeHandshakeFailed(Exception exception)
    {
        OnHandshakeFailed(exception);
        Server.RaiseHandshakeFailed(this, exception);
    }

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
    /// <see cref="System.Security.Authentication.AuthenticationException"/> for an untrusted
    /// certificate, or a <see cref="TimeoutException"/>); the session is then disconnected.
    /// </summary>
    protected virtual void OnHandshakeFailed(Exception exception)
    {
    }
}
