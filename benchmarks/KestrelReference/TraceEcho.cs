using System;
using System.Text;
using System.Threading.Tasks;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;

namespace KestrelReference;

/// <summary>
/// TRACE: the request head sent back as a message/http body, what NetCoreServer's HttpTraceServer
/// does. Kestrel does not keep the bytes it parsed, so the head is written again from the request
/// line and the headers as Kestrel gives them: byte for byte the same for a head whose header names
/// are in their usual case and in Kestrel's order (true of the benchmark's
/// "TRACE / HTTP/1.1", "Host", "Content-Length: 0"), else the same lines in another order or case.
/// </summary>
internal static class TraceEcho
{
    public static Task RespondAsync(HttpContext context)
    {
        var request = context.Request;
        var target = context.Features.Get<IHttpRequestFeature>()?.RawTarget ?? request.Path.ToString();

        // Kestrel decodes header values as ASCII, else as UTF-8, so UTF-8 gives back the bytes it got.
        var length = Size(request.Method) + 1 + Size(target) + 1 + Size(request.Protocol) + 2 + 2;
        foreach (var (name, values) in request.Headers)
        {
            foreach (var value in values)
                length += Size(name) + 2 + Size(value) + 2;
        }

        var response = context.Response;
        response.StatusCode = StatusCodes.Status200OK;
        response.ContentType = "message/http";
        response.ContentLength = length;

        var writer = response.BodyWriter;
        var span = writer.GetSpan(length);
        var written = 0;
        Append(span, ref written, request.Method);
        Append(span, ref written, " ");
        Append(span, ref written, target);
        Append(span, ref written, " ");
        Append(span, ref written, request.Protocol);
        Append(span, ref written, "\r\n");
        foreach (var (name, values) in request.Headers)
        {
            foreach (var value in values)
            {
                Append(span, ref written, name);
                Append(span, ref written, ": ");
                Append(span, ref written, value ?? string.Empty);
                Append(span, ref written, "\r\n");
            }
        }

        Append(span, ref written, "\r\n");
        writer.Advance(written);
        return writer.FlushAsync().AsTask();
    }

    private static int Size(string? text) => text is null ? 0 : Encoding.UTF8.GetByteCount(text);

    private static void Append(Span<byte> span, ref int written, string text) =>
        written += Encoding.UTF8.GetBytes(text, span[written..]);
}
