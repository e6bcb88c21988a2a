using System;
using System.Text;
using NetServer.Http;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Http;

/// <summary>
/// What a session does per request, measured with the thread's allocation counter after a warm-up:
/// load the parsed head, read it the way handlers do, answer with a cached body. 0 bytes is the target,
/// in the least of a few windows of <see cref="Rounds"/> rounds (see <see cref="Allocations.Least"/>).
/// </summary>
public class HttpAllocationTests
{
    private const int Rounds = 1000;

    private static readonly byte[] s_cachedBody = Encoding.UTF8.GetBytes("{\"status\":\"ok\",\"items\":[1,2,3]}");

    private static long Measure(Action round) => Allocations.Least(round, Rounds, warmUp: 10);

    [Fact]
    public void A_request_answered_from_a_cache_allocates_nothing_per_request()
    {
        var (bytes, head) = TestHeads.Request(
            "GET /api/items?page=2 HTTP/1.1\r\nHost: localhost:8080\r\nUser-Agent: bench/1.0\r\nAccept: application/json\r\nCookie: session=abc123\r\nX-Request-Id: 42\r\n\r\n");
        var request = new HttpRequest();
        var response = new HttpResponse();
        var seen = 0;

        var allocated = Measure(() =>
        {
            request.LoadHead(bytes, head);

            // The string API, as NetCoreServer's handlers use it: constants and reused strings.
            if (request.Method == "GET" && request.Url.Length > 0 && request.Protocol == "HTTP/1.1")
                seen++;
            for (var i = 0; i < request.Headers; i++)
                seen += request.Header(i).Item2.Length;
            if (request.TryGetHeader("Host", out var host))
                seen += host.Length;
            if (request.Cookies == 1)
                seen += request.Cookie(0).Item2.Length;
            if (request.TryGetPath(out var path))
                seen += path.Length;

            // The span API.
            if (request.MethodBytes.SequenceEqual("GET"u8) && request.TryGetHeader("accept"u8, out var accept))
                seen += accept.Length + request.TargetBytes.Length;

            response.MakeGetResponse(s_cachedBody, "application/json");
            seen += (int)response.Cache.Size;
        });

        Assert.Equal(0, allocated);
        Assert.True(seen > 0);
        Assert.StartsWith("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 31\r\n\r\n{", Encoding.UTF8.GetString(response.Cache.Data, 0, (int)response.Cache.Size), StringComparison.Ordinal);
    }

    [Fact]
    public void Standard_methods_cost_nothing()
    {
        string[] methods = ["GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "TRACE", "PATCH", "CONNECT"];
        var heads = new (byte[] Bytes, HttpHead Head)[methods.Length];
        for (var i = 0; i < methods.Length; i++)
            heads[i] = TestHeads.Request(methods[i] + " / HTTP/1.1\r\n\r\n");
        var request = new HttpRequest();
        var matched = 0;
        var rounds = 0;

        var allocated = Measure(() =>
        {
            rounds++;
            for (var i = 0; i < heads.Length; i++)
            {
                request.LoadHead(heads[i].Bytes, heads[i].Head);
                if (ReferenceEquals(request.Method, methods[i]))
                    matched++;
            }
        });

        Assert.Equal(0, allocated);
        Assert.Equal(rounds * methods.Length, matched);
    }

    [Fact]
    public void Building_responses_allocates_nothing_once_the_storage_has_grown()
    {
        var request = TestHeads.LoadRequest("GET /x HTTP/1.1\r\nHost: h\r\n\r\n");
        var response = new HttpResponse();
        var total = 0L;

        var allocated = Measure(() =>
        {
            total += response.MakeGetResponse("Hello, world!").Cache.Size;
            total += response.MakeErrorResponse(404, "missing").Cache.Size;
            total += response.MakeOkResponse(204).Cache.Size;
            total += response.MakeOptionsResponse().Cache.Size;
            total += response.MakeTraceResponse(request).Cache.Size;
            total += response.SetBegin(200).SetContentType(".html").SetHeader("Cache-Control", "no-cache").SetBody(s_cachedBody).Cache.Size;
            total += response.MakeHeadResponse().Status;
        });

        Assert.Equal(0, allocated);
        Assert.True(total > 0);
    }

    [Fact]
    public void Received_bodies_allocate_nothing_within_the_kept_storage()
    {
        var (bytes, head) = TestHeads.Request("POST /upload HTTP/1.1\r\nContent-Length: 4096\r\n\r\n");
        var request = new HttpRequest();
        var chunk = new byte[1024];
        var length = 0L;
        var rounds = 0;

        var allocated = Measure(() =>
        {
            rounds++;
            request.LoadHead(bytes, head);
            for (var i = 0; i < 4; i++)
                request.AppendBody(chunk, 4096);
            length += request.BodySpan.Length;
        });

        Assert.Equal(0, allocated);
        Assert.Equal(rounds * 4096L, length);
    }
}
