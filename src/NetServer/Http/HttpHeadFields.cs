namespace NetServer.Http;

/// <summary>The header fields of one <see cref="HttpHead"/> over the bytes it was parsed from.</summary>
internal readonly struct HttpHeadFields : IHttpHeaderSource
{
    private readonly HttpHead _head;
    private readonly ReadOnlyMemory<byte> _bytes;

    /// <param name="head">The parsed head.</param>
    /// <param name="bytes">The head's bytes, from its start line on (what its ranges point into).</param>
    public HttpHeadFields(HttpHead head, ReadOnlyMemory<byte> bytes)
    {
        _head = head;
        _bytes = bytes;
    }

    public bool TryGetHeader(ReadOnlySpan<byte> name, out ReadOnlySpan<byte> value)
    {
        var bytes = _bytes.Span;
        foreach (var field in _head.Headers)
        {
            if (HttpSyntax.EqualsIgnoreCase(field.Name.Of(bytes), name))
            {
                value = field.Value.Of(bytes);
                return true;
            }
        }

        value = default;
        return false;
    }
}
