namespace NetServer.Http;

/// <summary>
/// The string of one run of bytes of a message (a header value, the URL, the body), made the
/// first time it is asked for and kept for the rest of the message. It also survives into the
/// next message on the same connection: when the new bytes spell the same text (a client sending
/// the same Host, User-Agent or URL again), the old string is returned instead of a new one.
/// </summary>
/// <remarks>A mutable struct kept in fields and array elements; always used in place, never copied.</remarks>
internal struct HttpText
{
    // Longer strings are not kept past their message (a large body's text would stay alive with an idle connection).
    private const int KeptLength = 4096;

    private string? _text;
    private bool _current;

    /// <summary>A new message began: the string may no longer match, but it may be reused if it does.</summary>
    public void Invalidate()
    {
        _current = false;
        if (_text is not null && _text.Length > KeptLength)
            _text = null;
    }

    /// <summary>The application supplied the string itself (the builder side): no decoding needed.</summary>
    public void Set(string text)
    {
        _text = text;
        _current = true;
    }

    /// <summary>Drops the string (the storage was released).</summary>
    public void Forget()
    {
        _text = null;
        _current = false;
    }

    /// <summary>The text of <paramref name="utf8"/>: the kept string when it still matches, otherwise a new one.</summary>
    public string Get(ReadOnlySpan<byte> utf8)
    {
        if (!_current)
        {
            if (_text is null || !HttpAscii.SameText(_text, utf8))
                _text = utf8.IsEmpty ? string.Empty : TextEncoding.Decode(utf8);
            _current = true;
        }

        return _text!;
    }

    /// <summary>As <see cref="Get"/>, but a new string is first looked for among the common header names.</summary>
    public string GetName(ReadOnlySpan<byte> utf8)
    {
        if (!_current && (_text is null || !HttpAscii.SameText(_text, utf8)) && HttpKnownNames.TryGet(utf8, out var known))
            Set(known);
        return Get(utf8);
    }
}
