
namespace NetServer;

/// <summary>
/// One connection of a <see cref="MessageServer"/>, over whichever transport the server uses.
/// Override <see cref="MessageProtocol.OnMessage"/> to handle messages; send with the
/// <c>SendAsync</c> overloads or <see cref="MessageProtocol.StartMessage"/>.
/// </summary>
/// <remarks>
/// The transport session underneath is <see cref="StreamProtocol.Connection"/> (a
/// <c>TcpSession</c>, <c>SslSession</c> or <c>UdsSession</c>): its options
/// (<c>OptionSendBufferLimit</c>, <c>OptionIdleTimeout</c>, ...) can be set in <see cref="OnAttached"/>.
/// </remarks>
public class MessageSession : MessageProtocol
{
    /// <summary>A session of <paramref name="server"/>.</summary>
    public MessageSession(MessageServer server) => Server = server ?? throw new ArgumentNullException(nameof(server));

    /// <summary>The server that accepted this session.</summary>
    public MessageServer Server { get; }

    /// <summary>The session's identifier (the connection's <see cref="StreamConnection.Id"/>; <see cref="Guid.Empty"/> once detached).</summary>
    public Guid Id => Connection?.Id ?? Guid.Empty;

    /// <summary>True while connected.</summary>
    public bool IsConnected => Connection?.IsConnected == true;

    /// <summary>
    /// The peer's endpoint: the real client a trusted proxy's PROXY header named (see the server's
    /// <c>OptionProxyProtocol</c>), otherwise the socket's peer; read once and kept, so it is still
    /// known while the session disconnects (null when never known).
    /// </summary>
    public EndPoint? RemoteEndPoint => Connection?.CurrentConnection?.PeerEndPoint;

    /// <summary>What the PROXY header of this session's connection said; null when the server read none.</summary>
    public ProxyInfo? Proxy => Connection?.CurrentConnection?.Proxy;

    /// <summary>Bytes the session has queued and not yet handed to the operating system.</summary>
    public long BytesPending => Connection?.BytesPending ?? 0;

    /// <summary>Disconnects gracefully (queued messages are still sent); false if not connected.</summary>
    public bool Disconnect() => Connection?.Disconnect() == true;

    /// <summary>Called when the session is attached to its connection, before it connects: set connection options here.</summary>
    protected internal override void OnAttached()
    {
    }

    /// <summary>Called when the session is connected (and over TLS, handshaked), before any message.</summary>
    protected internal override void OnConnected()
    {
    }

    /// <summary>Called once, last, when the session disconnected, with the reason (<see cref="DisconnectReason.ProtocolError"/> for a bad length prefix).</summary>
    protected internal override void OnDisconnected(DisconnectReason reason)
    {
    }
}
