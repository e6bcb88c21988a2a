using System.Collections.Generic;
using System.Security.Cryptography;
using NetServer.Http;

namespace NetServer.WebSockets;

/// <summary>The pieces of the opening handshake (RFC 6455 4) both sides use: the key, its accept value, list fields.</summary>
internal static class WsHandshake
{
    private const string KeyGuid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

    /// <summary>The Sec-WebSocket-Accept value for <paramref name="key"/> (RFC 6455 4.2.2): base64 of SHA-1 of the key and the GUID.</summary>
    public static string ComputeAccept(string key)
    {
        var input = TextEncoding.Utf8.GetBytes(key + KeyGuid);
#pragma warning disable CA5350, CA1850 // SHA-1 is what RFC 6455 prescribes here (it proves the server read the key); once per connection, on every target
        using var sha1 = SHA1.Create();
        return Convert.ToBase64String(sha1.ComputeHash(input));
#pragma warning restore CA5350, CA1850
    }

    /// <summary>A new Sec-WebSocket-Key: 16 random bytes (RFC 6455 4.1 asks for a fresh nonce per connection).</summary>
    public static byte[] NewNonce()
    {
        var nonce = new byte[16];
        using var random = RandomNumberGenerator.Create();
        random.GetBytes(nonce);
        return nonce;
    }

    /// <summary>Whether <paramref name="key"/> is base64 of exactly 16 bytes, as a Sec-WebSocket-Key must be.</summary>
    public static bool IsValidKey(string key)
    {
        if (key.Length != 24 || !key.EndsWith("==", StringComparison.Ordinal))
            return false;
        try
        {
            return Convert.FromBase64String(key).Length == 16;
        }
        catch (FormatException)
        {
            return false;
        }
    }

    /// <summary>How many lines of the field <paramref name="name"/> the message has.</summary>
    public static int CountFields(HttpMessage message, ReadOnlySpan<byte> name)
    {
        var count = 0;
        var next = 0;
        while (message.Store.TryGetNextHeader(name, ref next, out _))
            count++;
        return count;
    }

    /// <summary>Every element of a list field, over all its lines (RFC 9110 5.6.1), empty ones skipped.</summary>
    public static List<string> ReadList(HttpMessage message, ReadOnlySpan<byte> name)
    {
        var elements = new List<string>();
        var next = 0;
        while (message.Store.TryGetNextHeader(name, ref next, out var value))
        {
            var position = 0;
            while (HttpSyntax.NextListElement(value, ref position, out var element))
            {
                if (!element.IsEmpty)
                    elements.Add(TextEncoding.Decode(element));
            }
        }

        return elements;
    }

    /// <summary>All lines of a field joined by ", " (the same list, RFC 9110 5.3), or null when there is none.</summary>
    public static string? JoinLines(HttpMessage message, ReadOnlySpan<byte> name)
    {
        string? joined = null;
        var next = 0;
        while (message.Store.TryGetNextHeader(name, ref next, out var value))
            joined = joined is null ? TextEncoding.Decode(value) : joined + ", " + TextEncoding.Decode(value);
        return joined;
    }

    /// <summary>Whether a field's value (all its lines) has <paramref name="token"/> as a list element.</summary>
    public static bool HasToken(HttpMessage message, ReadOnlySpan<byte> name, ReadOnlySpan<byte> token)
    {
        var next = 0;
        while (message.Store.TryGetNextHeader(name, ref next, out var value))
        {
            if (HttpSyntax.HasToken(value, token))
                return true;
        }

        return false;
    }
}
