namespace NetServer.Hosting;

/// <summary>The stable event ids <see cref="NetServerLogger"/> writes (documented in docs/hosting.md); never renumbered.</summary>
public static class NetServerLogEvents
{
    /// <summary>A server started listening (Information).</summary>
    public const int Listening = 1001;

    /// <summary>A server stopped (Information).</summary>
    public const int Stopped = 1002;

    /// <summary>A connection was refused at the session limit (Warning).</summary>
    public const int AcceptRefused = 1003;

    /// <summary>A connection closed, with the reason (Debug).</summary>
    public const int ConnectionClosed = 1004;

    /// <summary>A peer broke a protocol (Warning).</summary>
    public const int ProtocolError = 1005;

    /// <summary>A TLS handshake failed (Warning).</summary>
    public const int TlsHandshakeFailed = 1006;

    /// <summary>A slow reader paused sending (Debug).</summary>
    public const int SendPaused = 1007;

    /// <summary>A session was disconnected for not taking a multicast (Warning).</summary>
    public const int MulticastDisconnect = 1008;
}
