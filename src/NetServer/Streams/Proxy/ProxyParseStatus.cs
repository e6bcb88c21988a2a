namespace NetServer;

/// <summary>Outcome of feeding bytes to <see cref="ProxyHeader.Parse"/>.</summary>
internal enum ProxyParseStatus
{
    /// <summary>The bytes so far are a valid prefix of a header; read more and call again with all of them.</summary>
    NeedMoreData,

    /// <summary>A whole header was read: <c>consumed</c> bytes belong to it, the rest is payload.</summary>
    Done,

    /// <summary>The bytes are not a valid PROXY protocol header; the reason says what was wrong.</summary>
    Invalid,
}
