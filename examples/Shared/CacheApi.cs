using System;
using System.Buffers;
using System.Collections.Concurrent;
using System.Linq;
using System.Text.Json;

namespace NetServer.Examples;

/// <summary>
/// The key/value cache the HTTP examples serve at <see cref="Path"/>, as www/api/openapi.yaml
/// describes it: strings in memory under string keys (the <c>key</c> query parameter), shared by
/// every connection. The same code answers over HTTP and HTTPS: a session hands each request to
/// <see cref="Answer"/> and sends what it gives back.
/// </summary>
internal sealed class CacheApi
{
    /// <summary>The path of the cache; other paths get 404.</summary>
    public const string Path = "/api/cache";

    /// <summary>The methods <see cref="Path"/> takes (the Allow header of OPTIONS and 405).</summary>
    public const string Allow = "HEAD, GET, POST, PUT, DELETE, OPTIONS, TRACE";

    private const string JsonContentType = "application/json; charset=UTF-8";
    private const string KeyMissing = "The key query parameter is required";

    private readonly ConcurrentDictionary<string, string> _entries = new(StringComparer.Ordinal);

    /// <summary>
    /// Fills <paramref name="response"/> with the answer to <paramref name="request"/> and returns
    /// it, printing "METHOD target -> status". A HEAD request gets the GET answer: the server sends
    /// its head (Content-Length included) without the body.
    /// </summary>
    public HttpResponse Answer(HttpRequest request, HttpResponse response)
    {
        // Printed before the session sends it: once the answer is out, a pipelined request may reuse both objects.
        Fill(request, response);
        Console.WriteLine($"{request.Method} {request.Url} -> {response.Status}");
        return response;
    }

    private HttpResponse Fill(HttpRequest request, HttpResponse response)
    {
        if (!request.TryGetPath(out var path) || path != Path)
            return response.MakeErrorResponse(404, $"Nothing at {request.Url}; the cache is at {Path}");

        var hasKey = request.TryGetQuery("key", out var key);
        switch (request.Method)
        {
            case "GET" or "HEAD" when !hasKey:
                return response.MakeGetResponse(ListAsJson(), JsonContentType);
            case "GET" or "HEAD":
                return _entries.TryGetValue(key, out var value) ? response.MakeGetResponse(value) : NotFound(response, key);
            case "POST" or "PUT" when !hasKey:
                return response.MakeErrorResponse(400, KeyMissing);
            case "POST" or "PUT":
                _entries[key] = request.Body;
                return response.MakeOkResponse();
            case "DELETE" when !hasKey:
                return response.MakeErrorResponse(400, KeyMissing);
            case "DELETE":
                return _entries.TryRemove(key, out var removed) ? response.MakeGetResponse(removed) : NotFound(response, key);
            case "OPTIONS":
                return response.MakeOptionsResponse(Allow);
            case "TRACE":
                return response.MakeTraceResponse(request);
            default:
                return response.SetBegin(405).SetHeader("Allow", Allow).SetHeader("Content-Type", "text/plain; charset=UTF-8").SetBody($"{request.Method} is not a cache method");
        }
    }

    private static HttpResponse NotFound(HttpResponse response, string key) => response.MakeErrorResponse(404, $"No cache value for the key: {key}");

    /// <summary>Every entry, sorted by key, as a JSON array of {"key", "value"} objects.</summary>
    private ReadOnlySpan<byte> ListAsJson()
    {
        var output = new ArrayBufferWriter<byte>();
        using (var json = new Utf8JsonWriter(output))
        {
            json.WriteStartArray();
            foreach (var (key, value) in _entries.OrderBy(e => e.Key, StringComparer.Ordinal))
            {
                json.WriteStartObject();
                json.WriteString("key", key);
                json.WriteString("value", value);
                json.WriteEndObject();
            }

            json.WriteEndArray();
        }

        return output.WrittenSpan;
    }
}
