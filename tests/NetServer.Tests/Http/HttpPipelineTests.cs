using System;
using System.Collections.Generic;
using System.Text;
using NetServer.Http;
using Xunit;

namespace NetServer.Tests.Http;

/// <summary>
/// Several requests in one stream, parsed the way a connection does (head, then body, then the next
/// head from the bytes left), fed whole, byte by byte and in random splits.
/// </summary>
public sealed class HttpPipelineTests
{
    [Fact]
    public void Pipelined_requests_with_every_framing_come_out_in_order()
    {
        const string stream =
            "GET /a HTTP/1.1\r\nHost: x\r\n\r\n" +
            "POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello" +
            "\r\n" + // an extra CRLF after a body, as old clients send
            "POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3;e=1\r\nabc\r\n2\r\nde\r\n0\r\nT: 1\r\n\r\n" +
            "GET /d HTTP/1.0\r\nConnection: keep-alive\r\n\r\n" +
            "HEAD /e HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";

        var requests = HttpFeed.AllWays(HttpFeed.Bytes(stream), cuts => Run(HttpFeed.Bytes(stream), cuts, new HttpLimits()));

        Assert.Equal(
            [
                "GET /a body= trailers= close=False",
                "POST /b body=hello trailers= close=False",
                "POST /c body=abcde trailers=T=1; close=False",
                "GET /d body= trailers= close=False",
                "HEAD /e body= trailers= close=True",
                "end: NeedMoreData, 0 bytes left",
            ],
            requests);
    }

    [Fact]
    public void A_smuggled_request_inside_a_body_is_body_and_a_bad_head_stops_the_stream()
    {
        // The Content-Length body holds what looks like a request; then a request with both framings
        // (chunked wins, connection closes after), then an invalid one.
        const string stream =
            "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 26\r\n\r\nGET /smuggled HTTP/1.1\r\n\r\n" +
            "POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" +
            "GET /c HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nGET /d HTTP/1.1\r\n\r\n";

        var requests = HttpFeed.AllWays(HttpFeed.Bytes(stream), cuts => Run(HttpFeed.Bytes(stream), cuts, new HttpLimits()));

        Assert.Equal(
            [
                "POST /a body=GET /smuggled HTTP/1.1\r\n\r\n trailers= close=False",
                "POST /b body= trailers= close=True",
                "error 400",
            ],
            requests);
    }

    /// <summary>The connection loop: head, body, next head, over the retained unconsumed bytes.</summary>
    private static List<string> Run(byte[] bytes, IEnumerable<int> cuts, HttpLimits limits)
    {
        var results = new List<string>();
        var parser = default(HttpHeadParser);
        var head = new HttpHead();
        var trailers = new HttpHead();
        var reader = default(HttpBodyReader);
        var inBody = false;
        string current = "";
        var body = new StringBuilder();
        var start = 0;
        var available = 0;
        foreach (var cut in cuts)
        {
            available += cut;
            while (true)
            {
                var input = bytes.AsSpan(start, available - start);
                if (!inBody)
                {
                    var status = parser.ParseRequestHead(input, limits, head, out var consumed);
                    if (status == HttpParseStatus.NeedMoreData)
                        break;
                    if (status == HttpParseStatus.Error)
                    {
                        results.Add($"error {parser.Error.Status}");
                        return results;
                    }

                    current = $"{HttpFeed.Text(head.Method.Of(input))} {HttpFeed.Text(head.Target.Of(input))}";
                    reader = new HttpBodyReader(head.Framing, head.ContentLength, limits.MaxRequestBodySize, limits, trailers);
                    current += $" close={head.CloseAfter}";
                    start += consumed;
                    inBody = true;
                    body.Clear();
                    continue;
                }

                var bodyStatus = reader.Read(input, out var data, out var used);
                if (bodyStatus == HttpBodyStatus.Data)
                {
                    body.Append(HttpFeed.Text(data));
                }
                else if (bodyStatus == HttpBodyStatus.Done)
                {
                    var fields = new StringBuilder();
                    foreach (var field in trailers.Headers)
                        fields.Append(HttpFeed.Text(field.Name.Of(data))).Append('=').Append(HttpFeed.Text(field.Value.Of(data))).Append(';');
                    var close = current.Substring(current.IndexOf(" close=", StringComparison.Ordinal));
                    results.Add($"{current.Substring(0, current.Length - close.Length)} body={body} trailers={fields}{close}");
                    inBody = false;
                }
                else if (bodyStatus == HttpBodyStatus.Error)
                {
                    results.Add($"body error {reader.Error.Status}");
                    return results;
                }

                start += used;
                if (bodyStatus == HttpBodyStatus.NeedMoreData)
                    break;
            }
        }

        results.Add($"end: {(inBody ? "in body" : "NeedMoreData")}, {available - start} bytes left");
        return results;
    }
}
