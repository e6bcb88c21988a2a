namespace NetServer.Streams;

/// <summary>How a server's multicast reaches one session, decided once per session type.</summary>
internal enum MulticastRoute
{
    /// <summary>Not worked out yet.</summary>
    Unknown,

    /// <summary>No compatible send is overridden: queue a reference to the shared copy of the payload.</summary>
    SharedCopy,

    /// <summary>
    /// <c>SendAsync(ReadOnlySpan&lt;byte&gt;)</c> is overridden: call it, as NetCoreServer's multicast
    /// does, so what the override adds (a cap, framing, a filter) applies to multicasts too.
    /// </summary>
    SpanOverride,

    /// <summary>
    /// Only <c>SendAsync(byte[], long, long)</c> is overridden (NetCoreServer's multicast benchmark
    /// caps each session there): call it with the array of the multicast's shared copy.
    /// </summary>
    ArrayOverride,
}
