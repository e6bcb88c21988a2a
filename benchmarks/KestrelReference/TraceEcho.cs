using System;
using System.Buffers;
using System.IO.Pipelines;
using System.Text;
using System.Threading.Tasks;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;

namespace KestrelReference;

/// <summary>
/// TRACE: the request head sent back as a message/http body, what NetCoreServer's HttpTraceServer
/// does. Kestrel does not keep the bytes it parsed, so the head is written again from the request
/// line and the headers as Kestrel gives them: byte for byte the same for a head whose header names
/// are in their usual case and in Kestrel's order (true of wrk's TRACE in benchmarks/wrk/trace.lua:
/// "TRACE / HTTP/1.1", "Host", "Content-Length: 0"), else the same lines in another order or case.
/// </summary>
internal static class TraceEcho
{
    // Kestrel's default limits: an 8 KB request line and 32 KB of headers. The head written again
    // is never longer than the one received (the same bytes, less any spaces around values).
    private const int MaxHeadBytes = 64 * 1024;

    public static Task RespondAsync(HttpContext context)
    {
        var request = context.Request;
        var target = context.Features.Get<IHttpRequestFeature>()?.RawTarget ?? request.Path.ToString();
        var head = ArrayPool<byte>.Shared.Rent(MaxHeadBytes);

        // One pass over the headers into a pooled buffer, then the length is known (it must be set
        // before the body). A pass over IHeaderDictionary can box its enumerator: with a second pass
        // to count first, TRACE allocated 96 B per request; this way, none once the JIT has tiered up.
        var length = 0;
        Append(head, ref length, request.Method);
        Append(head, ref length, " ");
        Append(head, ref length, target);
        Append(head, ref length, " ");
        Append(head, ref length, request.Protocol);
        Append(head, ref length, "\r\n");
        foreach (var (name, values) in request.Headers)
        {
            foreach (var value in values)
            {
                Append(head, ref length, name);
                Append(head, ref length, ": ");
                Append(head, ref length, value ?? string.Empty);
                Append(head, ref length, "\r\n");
            }
        }

        Append(head, ref length, "\r\n");

        var response = context.Response;
        response.StatusCode = StatusCodes.Status200OK;
        response.ContentType = "message/http";
        response.ContentLength = length;

        // A write that completes at once (the usual case) returns no new Task (AsTask would allocate
        // one per request). One that does not may still read the buffer: it goes back to the pool after.
        var write = response.BodyWriter.WriteAsync(head.AsMemory(0, length));
        if (!write.IsCompletedSuccessfully)
            return ReturnAfterAsync(write, head);

        ArrayPool<byte>.Shared.Return(head);
        return Task.CompletedTask;
    }

    private static async Task ReturnAfterAsync(ValueTask<FlushResult> write, byte[] head)
    {
        try
        {
            await write;
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(head);
        }
    }

    // Kestrel decodes header values as ASCII, else as UTF-8, so UTF-8 gives back the bytes it got.
    private static void Append(byte[] head, ref int length, string text) =>
        length += Encoding.UTF8.GetBytes(text, head.AsSpan(length));
}
