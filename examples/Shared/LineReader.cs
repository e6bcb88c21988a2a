using System;
using System.Diagnostics.CodeAnalysis;
using System.Text;

namespace NetServer.Examples;

/// <summary>
/// Cuts a received byte stream into UTF-8 text lines. A stream socket delivers bytes, not
/// messages: one receive may hold half a line or several lines, so the chat frames its messages
/// with '\n' (which is what nc, telnet and the chat clients send).
/// </summary>
internal sealed class LineReader
{
    /// <summary>Longest line kept, in bytes; a longer one is handed on in pieces of this size, so a peer that never sends '\n' cannot grow memory.</summary>
    public const int MaxLineBytes = 4096;

    private readonly byte[] _line = new byte[MaxLineBytes];
    private int _length;

    /// <summary>
    /// Takes bytes from <paramref name="data"/> until a line is complete and returns it (without
    /// "\r\n" or "\n"); <paramref name="data"/> is left at the bytes after it. Returns false when
    /// <paramref name="data"/> ran out first: its bytes are kept for the next call.
    /// </summary>
    public bool TryRead(ref ReadOnlySpan<byte> data, [NotNullWhen(true)] out string? line)
    {
        var end = data.IndexOf((byte)'\n');
        var take = end < 0 ? data.Length : end;
        var room = _line.Length - _length;
        var complete = end >= 0;
        if (take >= room)
        {
            take = room;
            complete = true;
        }

        data[..take].CopyTo(_line.AsSpan(_length));
        _length += take;
        data = data[(end >= 0 && take == end ? take + 1 : take)..];
        if (!complete)
        {
            line = null;
            return false;
        }

        var text = _line.AsSpan(0, _length);
        if (text.EndsWith("\r"u8))
            text = text[..^1];
        line = Encoding.UTF8.GetString(text);
        _length = 0;
        return true;
    }
}
