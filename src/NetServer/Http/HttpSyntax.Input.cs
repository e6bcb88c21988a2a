namespace NetServer.Http;

/// <summary>
/// Checks what an application puts into a message it builds. A CR, LF or NUL in a header would
/// let a caller's data end the header early and write headers or a whole response of its own
/// (response splitting), so such input throws <see cref="ArgumentException"/> instead of being written.
/// </summary>
internal static partial class HttpSyntax
{
    /// <summary>A token (RFC 9110 section 5.6.2): a method or a header name.</summary>
    public static void CheckToken(string? value, string paramName)
    {
        if (value is null)
            ThrowHelper.ThrowArgumentNull(paramName);
        if (value.Length == 0)
            throw new ArgumentException("The name must not be empty.", paramName);
        foreach (var c in value)
        {
            if (!IsTokenChar(c))
                throw new ArgumentException($"'{Printable(c)}' is not allowed in an HTTP token (method or header name).", paramName);
        }
    }

    /// <summary>A field value or a reason phrase: no control characters but tab.</summary>
    public static void CheckFieldValue(string? value, string paramName)
    {
        if (value is null)
            ThrowHelper.ThrowArgumentNull(paramName);
        foreach (var c in value)
        {
            if (IsControl(c))
                throw new ArgumentException($"'{Printable(c)}' is not allowed in an HTTP header value.", paramName);
        }
    }

    /// <summary>A part of the start line without spaces: the request target or the protocol version.</summary>
    public static void CheckWord(string? value, string paramName)
    {
        if (value is null)
            ThrowHelper.ThrowArgumentNull(paramName);
        if (value.Length == 0)
            throw new ArgumentException("The value must not be empty.", paramName);
        foreach (var c in value)
        {
            if (c == ' ' || c == '\t' || IsControl(c))
                throw new ArgumentException($"'{Printable(c)}' is not allowed in an HTTP request line or status line.", paramName);
        }
    }

    /// <summary>A cookie name, value or attribute: a field value without ';' (which would start an attribute of the caller's choosing).</summary>
    public static void CheckCookiePart(string? value, string paramName, bool name = false)
    {
        CheckFieldValue(value, paramName);
        if (name && value!.Length == 0)
            throw new ArgumentException("The cookie name must not be empty.", paramName);
        foreach (var c in value!)
        {
            if (c == ';' || (name && (c == '=' || c == ' ' || c == '\t')))
                throw new ArgumentException($"'{Printable(c)}' is not allowed in a cookie {(name ? "name" : "value or attribute")}.", paramName);
        }
    }

    // tchar: "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." / "^" / "_" / "`" / "|" / "~" / DIGIT / ALPHA
    public static bool IsTokenChar(char c) =>
        c is (>= 'a' and <= 'z') or (>= 'A' and <= 'Z') or (>= '0' and <= '9')
            or '!' or '#' or '$' or '%' or '&' or '\'' or '*' or '+' or '-' or '.' or '^' or '_' or '`' or '|' or '~';

    private static bool IsControl(char c) => (c < ' ' && c != '\t') || c == '\x7f';

    private static string Printable(char c) => c < ' ' || c == '\x7f' ? $"\\x{(int)c:X2}" : new string(c, 1);
}
