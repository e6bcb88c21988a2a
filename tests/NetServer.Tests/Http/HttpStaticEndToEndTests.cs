using System;
using System.IO;
using System.Text.RegularExpressions;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Http;

/// <summary>Static content served by a running server over a socket: GET, HEAD, 304, a range, a traversal, a file changed on disk.</summary>
public sealed class HttpStaticEndToEndTests : IDisposable
{
    private readonly string _folder = Path.Combine(Path.GetTempPath(), "netserver-static-" + Guid.NewGuid().ToString("N"));

    public HttpStaticEndToEndTests()
    {
        Directory.CreateDirectory(_folder);
        File.WriteAllText(Path.Combine(_folder, "a.txt"), "0123456789abcdef");
    }

    public void Dispose() => Directory.Delete(_folder, recursive: true);

    [Fact]
    public async Task Static_files_are_served_with_conditions_ranges_and_changes()
    {
        using var server = new HttpTestServer();
        server.AddStaticContent(_folder, "/files");
        Assert.True(server.Start());
        using var raw = await RawHttpConnection.ConnectAsync(server.BoundPort);

        await raw.SendAsync("GET /files/a.txt HTTP/1.1\r\nHost: x\r\n\r\n");
        var get = await raw.ReadResponseAsync();
        Assert.Equal(200, get.Status);
        Assert.Equal("0123456789abcdef", get.BodyText);
        var etag = Regex.Match(get.Head, "ETag: (\"[0-9a-f]+\")", RegexOptions.IgnoreCase).Groups[1].Value;
        Assert.NotEmpty(etag);

        await raw.SendAsync("HEAD /files/a.txt HTTP/1.1\r\nHost: x\r\n\r\n");
        var head = await raw.ReadResponseAsync(afterHead: true);
        Assert.Equal(200, head.Status);
        Assert.Contains("Content-Length: 16", head.Head);

        await raw.SendAsync($"GET /files/a.txt HTTP/1.1\r\nHost: x\r\nIf-None-Match: {etag}\r\n\r\n");
        Assert.Equal(304, (await raw.ReadResponseAsync()).Status);

        await raw.SendAsync("GET /files/a.txt HTTP/1.1\r\nHost: x\r\nRange: bytes=2-5\r\n\r\n");
        var range = await raw.ReadResponseAsync();
        Assert.Equal(206, range.Status);
        Assert.Equal("2345", range.BodyText);
        Assert.Contains("Content-Range: bytes 2-5/16", range.Head);

        // Not static: the application answers, on the same connection.
        await raw.SendAsync("GET /app HTTP/1.1\r\nHost: x\r\n\r\n");
        Assert.Equal("GET /app ", (await raw.ReadResponseAsync()).BodyText);

        // A changed file is served new (the folder is watched).
        File.WriteAllText(Path.Combine(_folder, "a.txt"), "changed");
        using (var probe = new System.Net.Http.HttpClient())
        {
            var limit = DateTime.UtcNow + Wait.Default;
            string body;
            while ((body = await probe.GetStringAsync($"http://127.0.0.1:{server.BoundPort}/files/a.txt").WaitAsync(Wait.Default)) != "changed")
            {
                Assert.True(DateTime.UtcNow < limit, "the changed file was not served; still " + body);
                await Task.Delay(50);
            }
        }

        await raw.SendAsync("GET /files/../../etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n");
        var traversal = await raw.ReadResponseAsync();
        Assert.Equal(400, traversal.Status);
        await raw.AssertClosedAsync();
    }

    [Fact]
    public async Task A_static_answer_to_a_closing_request_says_Connection_close_and_closes()
    {
        using var server = new HttpTestServer();
        server.AddStaticContent(_folder, "/files");
        Assert.True(server.Start());
        using var raw = await RawHttpConnection.ConnectAsync(server.BoundPort);
        await raw.SendAsync("GET /files/a.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        var get = await raw.ReadResponseAsync();
        Assert.Equal("0123456789abcdef", get.BodyText);
        Assert.True(get.Says("Connection: close"), get.Head);
        await raw.AssertClosedAsync();
    }
}
