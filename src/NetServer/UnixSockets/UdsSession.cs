namespace NetServer;

/// <summary>One connection accepted by a <see cref="UdsServer"/>. Subclass it and override the <c>On*</c> hooks.</summary>
public class UdsSession : StreamSession
{
    /// <summary>A session of <paramref name="server"/>.</summary>
    public UdsSession(UdsServer server)
        : base(server) => Server = server;

    /// <summary>The server this session belongs to.</summary>
    public UdsServer Server { get; }
}
