using System;
using System.Text;
using NetServer.Http;

namespace NetServer.Fuzz;

/// <summary>
/// The HTTP parsers as a connection drives them: all unconsumed bytes offered again with the new
/// ones appended, under the default limits and under small ones. Rules: consumed never past the
/// input; nothing consumed while more is needed; a head no longer than the limits allow, and never
/// "need more" past them (memory bounded); an error with its status and reason; the same outcome
/// however the bytes were cut.
/// </summary>
internal static class HttpTargets
{
    private static readonly HttpLimits s_default = new();
    private static readonly HttpLimits s_small = new()
    {
        MaxRequestLineSize = 64,
        MaxRequestHeadersTotalSize = 128,
        MaxRequestHeaderCount = 4,
        MaxResponseHeadersTotalSize = 192,
    };

    public static void RequestHead(ReadOnlySpan<byte> input)
    {
        foreach (var limits in new[] { s_default, s_small })
            Head(input, limits, isRequest: true, limits.MaxRequestLineSize + limits.MaxRequestHeadersTotalSize + 2);
    }

    public static void ResponseHead(ReadOnlySpan<byte> input)
    {
        foreach (var limits in new[] { s_default, s_small })
            Head(input, limits, isRequest: false, limits.MaxResponseHeadersTotalSize);
    }

    private static void Head(ReadOnlySpan<byte> input, HttpLimits limits, bool isRequest, int bound)
    {
        string? whole = null;
        foreach (var cuts in Cuts.Of(input))
        {
            var outcome = ParseHead(input, cuts, limits, isRequest, bound);
            whole ??= outcome;
            Invariant.Equal(whole, outcome, "head outcome");
        }
    }

    private static string ParseHead(ReadOnlySpan<byte> input, int[] cuts, HttpLimits limits, bool isRequest, int bound)
    {
        var parser = default(HttpHeadParser);
        var head = new HttpHead();
        var available = 0;
        var status = HttpParseStatus.NeedMoreData;
        var consumed = 0;
        foreach (var cut in cuts)
        {
            available += cut;
            var offered = input.Slice(0, available);
            status = isRequest
                ? parser.ParseRequestHead(offered, limits, head, out consumed)
                : parser.ParseResponseHead(offered, requestWasHead: false, limits, head, out consumed);
            if (status != HttpParseStatus.NeedMoreData)
                break;
            Invariant.Check(consumed == 0, "nothing is consumed while the head is incomplete");
            Invariant.Check(available <= bound, $"{available} bytes waited on as a head past the limit of {bound}");
        }

        if (status == HttpParseStatus.Error)
        {
            Invariant.Check(parser.Error.Status is >= 400 and < 600 && !string.IsNullOrEmpty(parser.Error.Reason), "an error has a 4xx/5xx status and a reason");
            return $"error {parser.Error.Status}";
        }

        Invariant.Check(parser.Error.IsNone, "no error unless the status says so");
        if (status == HttpParseStatus.NeedMoreData)
            return "more";
        Invariant.Check(consumed > 0 && consumed <= available && consumed == head.Length, "a head consumes its own bytes, within the input");
        Invariant.Check(consumed <= bound, $"a head of {consumed} bytes passed the limit of {bound}");
        Invariant.Check(!isRequest || head.HeaderCount <= limits.MaxRequestHeaderCount, "header count within MaxRequestHeaderCount");
        Invariant.Check(head.Framing != HttpBodyFraming.ContentLength || head.ContentLength >= 0, "a Content-Length body has a length");

        var bytes = input.Slice(0, consumed);
        var text = new StringBuilder()
            .Append(consumed).Append(' ').Append(Slice(bytes, head.Method)).Append(' ').Append(Slice(bytes, head.Target))
            .Append(' ').Append(head.MinorVersion).Append(' ').Append(head.Status).Append(' ').Append(Slice(bytes, head.Reason))
            .Append(' ').Append(head.Framing).Append(' ').Append(head.ContentLength).Append(head.CloseAfter).Append(head.IsUpgrade).Append('\n');
        foreach (var field in head.Headers)
            text.Append(Slice(bytes, field.Name)).Append(": ").Append(Slice(bytes, field.Value)).Append('\n');
        return text.ToString();
    }

    private static string Slice(ReadOnlySpan<byte> head, HttpRange range)
    {
        Invariant.Check(range.Start >= 0 && range.Length >= 0 && range.Start + range.Length <= head.Length, "a parsed range lies inside the head");
        return Encoding.Latin1.GetString(head.Slice(range.Start, range.Length));
    }

    /// <summary>The first byte picks the framing, the body limit and a Content-Length; the rest is the body as sent.</summary>
    public static void Body(ReadOnlySpan<byte> input)
    {
        if (input.IsEmpty)
            return;
        var chunked = (input[0] & 1) != 0;
        long? maxBodySize = (input[0] & 2) != 0 ? 64 : null;
        var contentLength = chunked ? -1 : input[0] >> 2;
        var body = input.Slice(1);
        string? whole = null;
        foreach (var cuts in Cuts.Of(body))
        {
            var outcome = ReadBody(body, cuts, chunked ? HttpBodyFraming.Chunked : HttpBodyFraming.ContentLength, contentLength, maxBodySize);
            whole ??= outcome;
            Invariant.Equal(whole, outcome, "body outcome");
        }
    }

    private static string ReadBody(ReadOnlySpan<byte> input, int[] cuts, HttpBodyFraming framing, long contentLength, long? maxBodySize)
    {
        var trailers = new HttpHead();
        var reader = new HttpBodyReader(framing, contentLength, maxBodySize, s_small, trailers);
        var body = new StringBuilder();
        var start = 0;
        var available = 0;
        var next = 0;
        while (true)
        {
            var status = reader.Read(input.Slice(start, available - start), out var data, out var consumed);
            Invariant.Check(consumed >= 0 && consumed <= available - start, "a read consumes within its input");
            if (status == HttpBodyStatus.Data)
            {
                Invariant.Check(!data.IsEmpty, "Data is never empty");
                body.Append(Encoding.Latin1.GetString(data));
                Invariant.Check(maxBodySize is null || body.Length <= maxBodySize, "the body stays within its limit");
            }
            else if (status == HttpBodyStatus.Done)
            {
                Invariant.Check(framing != HttpBodyFraming.ContentLength || body.Length == contentLength, "a Content-Length body is exactly that long");
                Invariant.Check(trailers.HeaderCount <= s_small.MaxRequestHeaderCount, "trailers within the field count limit");
                return $"done {body} {trailers.HeaderCount} {start + consumed}";
            }
            else if (status == HttpBodyStatus.Error)
            {
                Invariant.Check(reader.Error.Status is >= 400 and < 600, "an error has a 4xx/5xx status");
                return $"error {reader.Error.Status} {body}";
            }

            start += consumed;
            if (status == HttpBodyStatus.NeedMoreData)
            {
                Invariant.Check(available - start <= s_small.MaxRequestLineSize + s_small.MaxRequestHeadersTotalSize + 2, "unconsumed bytes waiting on a chunk line or trailers stay bounded");
                if (next == cuts.Length)
                    return $"more {body}";
                available += cuts[next++];
            }
        }
    }
}
