namespace NetServer.Http;

/// <summary>
/// Header fields of a parsed request, by name, for code that reads a few of them without strings
/// (the static-content layer). Implemented by a struct over the session's parsed head, passed as
/// a generic argument so the calls are neither boxed nor virtual.
/// </summary>
internal interface IHttpHeaderSource
{
    /// <summary>
    /// Finds the first field named <paramref name="name"/> (compared ASCII case-insensitively);
    /// <paramref name="value"/> is its value without surrounding spaces and tabs.
    /// </summary>
    bool TryGetHeader(ReadOnlySpan<byte> name, out ReadOnlySpan<byte> value);
}
