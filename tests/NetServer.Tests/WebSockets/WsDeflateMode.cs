namespace NetServer.Tests.WebSockets;

/// <summary>How an interop test's client offers permessage-deflate (the server side has it on whenever the client offers it).</summary>
public enum WsDeflateMode
{
    /// <summary>Not offered.</summary>
    Off,

    /// <summary>Offered with the client's default parameters.</summary>
    On,

    /// <summary>Offered asking for server_no_context_takeover and client_no_context_takeover.</summary>
    NoContextTakeover,
}
