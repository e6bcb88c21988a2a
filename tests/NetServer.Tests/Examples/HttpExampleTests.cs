using System;
using System.Globalization;
using System.Net;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Examples;

/// <summary>
/// The HTTP examples as a user runs them: the cache servers as child processes on a free port,
/// driven by an HttpClientEx of the test (every operation of www/api/openapi.yaml) and by the
/// client examples' demos, over HTTP and over HTTPS with the repository's test certificates.
/// </summary>
public sealed class HttpExampleTests
{
    private static readonly TimeSpan s_timeout = TimeSpan.FromSeconds(10);

    [Fact]
    public async Task HttpServer_answers_every_cache_operation_as_the_api_describes_and_serves_the_page()
    {
        await using var server = ProgramProcess.Start("HttpServer", "0", IPAddress.Loopback.ToString());
        var port = await server.ListeningPortAsync();
        using var client = new HttpClientEx(IPAddress.Loopback, port);

        await AssertAnswerAsync(client.SendGetRequest("/api/cache", s_timeout), 200, "[]", "application/json; charset=UTF-8");
        await AssertAnswerAsync(client.SendPutRequest("/api/cache?key=greeting", "Hello, World!", s_timeout), 200, "");
        await AssertAnswerAsync(client.SendPostRequest("/api/cache?key=a%20b", "C#", s_timeout), 200, "");
        await AssertAnswerAsync(client.SendGetRequest("/api/cache?key=greeting", s_timeout), 200, "Hello, World!", "text/plain; charset=UTF-8");
        await AssertAnswerAsync(
            client.SendGetRequest("/api/cache", s_timeout),
            200,
            """[{"key":"a b","value":"C#"},{"key":"greeting","value":"Hello, World!"}]""",
            "application/json; charset=UTF-8");

        // HEAD: the GET answer's head, Content-Length included, without its body.
        var head = await client.SendHeadRequest("/api/cache?key=greeting", s_timeout);
        Assert.Equal(200, head.Status);
        Assert.True(head.TryGetHeader("Content-Length", out var length));
        Assert.Equal("13", length);
        Assert.Equal(0, head.BodyLength);

        await AssertAnswerAsync(client.SendDeleteRequest("/api/cache?key=greeting", s_timeout), 200, "Hello, World!");
        await AssertAnswerAsync(client.SendGetRequest("/api/cache?key=greeting", s_timeout), 404, "No cache value for the key: greeting");
        await AssertAnswerAsync(client.SendHeadRequest("/api/cache?key=greeting", s_timeout), 404, "");
        await AssertAnswerAsync(client.SendDeleteRequest("/api/cache?key=greeting", s_timeout), 404, "No cache value for the key: greeting");
        await AssertAnswerAsync(client.SendDeleteRequest("/api/cache", s_timeout), 400, "The key query parameter is required");
        await AssertAnswerAsync(client.SendPutRequest("/api/cache", "lost", s_timeout), 400, "The key query parameter is required");
        await AssertAnswerAsync(client.SendPostRequest("/api/cache", "lost", s_timeout), 400, "The key query parameter is required");

        var options = await client.SendOptionsRequest("/api/cache", s_timeout);
        Assert.Equal(200, options.Status);
        Assert.True(options.TryGetHeader("Allow", out var allow));
        Assert.Equal("HEAD, GET, POST, PUT, DELETE, OPTIONS, TRACE", allow);

        var trace = await client.SendTraceRequest("/api/cache", s_timeout);
        Assert.Equal(200, trace.Status);
        Assert.StartsWith("TRACE /api/cache HTTP/1.1\r\n", trace.Body, StringComparison.Ordinal);
        Assert.Contains($"\r\nHost: 127.0.0.1:{port}\r\n", trace.Body, StringComparison.Ordinal); // added by the client

        await AssertAnswerAsync(client.SendGetRequest("/elsewhere", s_timeout), 404, "Nothing at /elsewhere; the cache is at /api/cache");

        // The page is static content from www/api, answered before the session's hooks.
        var page = await client.SendGetRequest("/api/index.html", s_timeout);
        Assert.Equal(200, page.Status);
        Assert.Contains("swagger-ui-bundle.js", page.Body, StringComparison.Ordinal);

        // The server logs each answer; an empty line at its console stops it.
        await server.WaitForLinesAsync("DELETE /api/cache?key=greeting -> 200", "PUT /api/cache -> 400", "GET /api/index.html -> static");
        await server.TypeAsync(string.Empty);
        Assert.Equal(0, await server.WaitForExitAsync());
    }

    [Fact]
    public async Task HttpClient_demo_passes_against_the_HttpServer_example()
    {
        await using var server = ProgramProcess.Start("HttpServer", "0");
        var port = await server.ListeningPortAsync();

        await using var client = ProgramProcess.Start("HttpClient", "127.0.0.1", port.ToString(CultureInfo.InvariantCulture), "--demo");
        await client.WaitForLineAsync("Demo passed");
        Assert.Equal(0, await client.WaitForExitAsync());
        await server.WaitForLinesAsync("PUT /api/cache?key=greeting -> 200", "GET /api/cache?key=greeting -> 404");
    }

    [Fact]
    public async Task HttpsClient_demo_passes_against_the_HttpsServer_example_over_tls()
    {
        // Both find the repository's certs/ on their own: the server presents server.pfx, the client trusts ca.pem.
        await using var server = ProgramProcess.Start("HttpsServer", "0");
        var port = await server.ListeningPortAsync();

        await using var client = ProgramProcess.Start("HttpsClient", "localhost", port.ToString(CultureInfo.InvariantCulture), "--demo");
        await client.WaitForLineAsync("Demo passed");
        Assert.Equal(0, await client.WaitForExitAsync());
        await server.WaitForLinesAsync("PUT /api/cache?key=greeting -> 200", "DELETE /api/cache?key=greeting -> 200");
    }

    [Fact]
    public async Task HttpClient_demo_fails_when_no_server_answers()
    {
        // A port that was free a moment ago: the demo reports the refused connection and exits 1.
        int port;
        using (var probe = new System.Net.Sockets.TcpListener(IPAddress.Loopback, 0))
        {
            probe.Start();
            port = ((IPEndPoint)probe.LocalEndpoint).Port;
        }

        await using var client = ProgramProcess.Start("HttpClient", "127.0.0.1", port.ToString(CultureInfo.InvariantCulture), "--demo");
        await client.WaitForLineAsync("Request failed: ");
        await client.WaitForLineAsync("Demo failed");
        Assert.Equal(1, await client.WaitForExitAsync());
    }

    private static async Task AssertAnswerAsync(Task<HttpResponse> request, int status, string body, string? contentType = null)
    {
        var response = await request;
        Assert.Equal(status, response.Status);
        Assert.Equal(body, response.Body);
        if (contentType is not null)
        {
            Assert.True(response.TryGetHeader("Content-Type", out var type));
            Assert.Equal(contentType, type);
        }
    }
}
