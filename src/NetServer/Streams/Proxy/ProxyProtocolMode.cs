namespace NetServer;

/// <summary>
/// Whether a server expects a PROXY protocol header (v1 or v2, as HAProxy's <c>send-proxy</c> and
/// <c>send-proxy-v2</c> write it) at the start of its connections; see
/// <see cref="StreamServer{TSession}.OptionProxyProtocol"/>.
/// </summary>
public enum ProxyProtocolMode
{
    /// <summary>No header is read (the default): the socket's peer is the client.</summary>
    Off = 0,

    /// <summary>
    /// Every connection must come from a trusted source (<see cref="StreamServer{TSession}.OptionProxyTrustedNetworks"/>;
    /// any peer of a Unix socket) and start with a valid header. Any other connection is closed
    /// with <see cref="DisconnectReason.ProtocolError"/> before the session's first hook.
    /// </summary>
    Required,

    /// <summary>
    /// Connections from trusted sources must start with a valid header, as with <see cref="Required"/>;
    /// connections from other addresses are served directly, as their own client, and no header
    /// is read from them (bytes they send are application data, so they cannot pose as someone else).
    /// </summary>
    Optional,
}
