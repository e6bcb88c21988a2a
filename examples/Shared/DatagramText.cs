using System;
using System.Net;
using System.Text;

namespace NetServer.Examples;

/// <summary>How the UDP examples show a datagram: as UTF-8 text, with where it came from.</summary>
internal static class DatagramText
{
    /// <summary>
    /// For example <c>Received "hello" from 127.0.0.1:50123</c>. One line end at the end of the
    /// datagram (nc sends one with every line) is left out; anything else is shown as it came.
    /// </summary>
    public static string Describe(EndPoint source, ReadOnlySpan<byte> datagram)
    {
        if (datagram.EndsWith("\n"u8))
            datagram = datagram[..^(datagram.EndsWith("\r\n"u8) ? 2 : 1)];
        return $"Received \"{Encoding.UTF8.GetString(datagram)}\" from {source}";
    }
}
