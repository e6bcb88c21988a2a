namespace NetServer.WebSockets;

/// <summary>Why a <see cref="WsInflater"/> stopped, which decides the close code the protocol sends.</summary>
internal enum WsInflateFailure
{
    /// <summary>Nothing went wrong.</summary>
    None,

    /// <summary>The message inflates to more than the limit (close with 1009, message too big).</summary>
    TooBig,

    /// <summary>
    /// The compressed bytes are not valid deflate data (close with 1007, invalid payload data, as
    /// RFC 7692 8.2.3's advice and the Autobahn suite's sections 12 and 13 expect of most peers).
    /// </summary>
    Corrupt,
}
