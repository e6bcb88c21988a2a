using System;
using System.Text;
using NetServer.Http;

namespace NetServer.Tests.Http;

/// <summary>
/// Builds the <see cref="HttpHead"/> the parser would produce for a well-formed head, by splitting
/// the text on its line ends, spaces and colons: enough for the model's tests, which must not
/// depend on the parser.
/// </summary>
internal static class TestHeads
{
    public static (byte[] Bytes, HttpHead Head) Request(string text) => Build(text, response: false);

    public static (byte[] Bytes, HttpHead Head) Response(string text) => Build(text, response: true);

    /// <summary>Loads <paramref name="text"/> into a new request.</summary>
    public static HttpRequest LoadRequest(string text)
    {
        var (bytes, head) = Request(text);
        var request = new HttpRequest();
        request.LoadHead(bytes, head);
        return request;
    }

    private static (byte[] Bytes, HttpHead Head) Build(string text, bool response)
    {
        var bytes = Encoding.UTF8.GetBytes(text);
        var head = new HttpHead();
        head.Reset();
        head.Length = bytes.Length;

        var lineEnd = IndexOf(bytes, "\r\n"u8, 0);
        var firstSpace = IndexOf(bytes, " "u8, 0);
        var secondSpace = IndexOf(bytes, " "u8, firstSpace + 1);
        if (secondSpace < 0 || secondSpace > lineEnd)
            secondSpace = lineEnd;
        var first = new HttpRange(0, firstSpace);
        var second = new HttpRange(firstSpace + 1, secondSpace - firstSpace - 1);
        var third = secondSpace == lineEnd ? new HttpRange(lineEnd, 0) : new HttpRange(secondSpace + 1, lineEnd - secondSpace - 1);
        if (response)
        {
            head.Version = first;
            head.Status = int.Parse(text.AsSpan(second.Start, second.Length), provider: System.Globalization.CultureInfo.InvariantCulture);
            head.Reason = third;
        }
        else
        {
            head.Method = first;
            head.Target = second;
            head.Version = third;
        }

        var start = lineEnd + 2;
        while (true)
        {
            var end = IndexOf(bytes, "\r\n"u8, start);
            if (end == start)
                break;
            var colon = IndexOf(bytes, ":"u8, start);
            var valueStart = colon + 1;
            while (bytes[valueStart] == ' ')
                valueStart++;
            var valueEnd = end;
            while (valueEnd > valueStart && bytes[valueEnd - 1] == ' ')
                valueEnd--;
            var name = new HttpRange(start, colon - start);
            var value = new HttpRange(valueStart, valueEnd - valueStart);
            head.AddHeader(name, value);

            var nameText = Encoding.ASCII.GetString(bytes, name.Start, name.Length);
            var valueText = Encoding.ASCII.GetString(bytes, value.Start, value.Length);
            if (nameText.Equals("Content-Length", StringComparison.OrdinalIgnoreCase))
            {
                head.Framing = HttpBodyFraming.ContentLength;
                head.ContentLength = long.Parse(valueText, System.Globalization.CultureInfo.InvariantCulture);
            }
            else if (nameText.Equals("Transfer-Encoding", StringComparison.OrdinalIgnoreCase))
            {
                head.Framing = HttpBodyFraming.Chunked;
            }

            start = end + 2;
        }

        if (start + 2 != bytes.Length)
            throw new ArgumentException("The text must end with the head's empty line.", nameof(text));
        return (bytes, head);
    }

    private static int IndexOf(byte[] bytes, ReadOnlySpan<byte> what, int from)
    {
        var found = bytes.AsSpan(from).IndexOf(what);
        return found < 0 ? -1 : from + found;
    }
}
