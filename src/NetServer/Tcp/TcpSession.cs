namespace NetServer;

/// <summary>One connection accepted by a <see cref="TcpServer"/>. Subclass it and override the <c>On*</c> hooks.</summary>
public class TcpSession : StreamSession
{
    /// <summary>A session of <paramref name="server"/>.</summary>
    public TcpSession(TcpServer server)
        : base(server) => Server = server;

    /// <summary>The server this session belongs to.</summary>
    public TcpServer Server { get; }
}
