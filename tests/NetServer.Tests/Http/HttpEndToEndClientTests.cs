using System;
using System.IO;
using System.Net;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Http;

/// <summary>
/// The server with real clients: a large upload taken in parts, a chunked answer streamed part by
/// part, curl (keep-alive, chunked upload, HEAD), and HttpClientEx's timeout and cancellation.
/// </summary>
public sealed class HttpEndToEndClientTests
{
    [Fact]
    public async Task A_64_MiB_upload_is_taken_in_parts_without_piling_up_in_the_request()
    {
        const long size = 64L * 1024 * 1024;
        using var server = new HttpTestServer();
        server.Header = context =>
        {
            context.MaxRequestBodySize = null;
            context.ReceiveBodyInParts();
        };
        Assert.True(server.Start());
        using var raw = await RawHttpConnection.ConnectAsync(server.BoundPort);
        await raw.SendAsync($"POST /parts HTTP/1.1\r\nHost: x\r\nContent-Length: {size}\r\n\r\n");
        var block = new byte[256 * 1024];
        for (long sent = 0; sent < size; sent += block.Length)
            await raw.SendAsync(block);
        var response = await raw.ReadResponseAsync(timeout: TimeSpan.FromSeconds(30));
        Assert.Equal($"parts {size} body 0", response.BodyText);

        // The request held its head only: never a body's worth.
        Assert.True(Volatile.Read(ref server.LargestCacheDuringParts) < 64 * 1024, $"the request grew to {server.LargestCacheDuringParts} bytes");
    }

    [Fact]
    public async Task A_chunked_answer_streamed_in_parts_reaches_HttpClientEx_whole()
    {
        using var server = new HttpTestServer();
        Assert.True(server.Start());
        using var client = new HttpClientEx(IPAddress.Loopback, server.BoundPort);
        var response = await client.SendGetRequest("/stream", Wait.Default);
        Assert.Equal(200, response.Status);
        Assert.True(response.TryGetHeader("Transfer-Encoding", out var coding) && coding == "chunked");
        Assert.Equal(HttpTestServer.StreamBody(), response.Body);

        // The answer ended with the last chunk: the connection carries the next request.
        Assert.Equal("GET /after ", (await client.SendGetRequest("/after", Wait.Default)).Body);
        Assert.Equal(1, server.SessionsCreated);
    }

    [Fact]
    public async Task A_chunked_answer_streamed_in_parts_reads_whole_over_a_raw_socket_after_a_HEAD()
    {
        using var server = new HttpTestServer();
        Assert.True(server.Start());
        using var raw = await RawHttpConnection.ConnectAsync(server.BoundPort);
        await raw.SendAsync("HEAD /stream HTTP/1.1\r\nHost: x\r\n\r\nGET /stream HTTP/1.1\r\nHost: x\r\n\r\n");
        var head = await raw.ReadResponseAsync(afterHead: true);
        Assert.Contains("Transfer-Encoding: chunked", head.Head);
        var get = await raw.ReadResponseAsync();
        Assert.Equal(HttpTestServer.StreamBody(), get.BodyText);
    }

    [Fact]
    public async Task HttpClientEx_times_out_on_a_server_that_never_answers_and_the_next_request_uses_a_new_connection()
    {
        using var server = new HttpTestServer();
        Assert.True(server.Start());
        using var client = new HttpClientEx(IPAddress.Loopback, server.BoundPort);
        var started = DateTime.UtcNow;
        await Assert.ThrowsAsync<TimeoutException>(() => client.SendGetRequest("/never", TimeSpan.FromSeconds(1)).WaitAsync(Wait.Default));
        var took = DateTime.UtcNow - started;
        Assert.True(took < TimeSpan.FromSeconds(5), $"the timeout took {took}");

        var next = await client.SendGetRequest("/next", Wait.Default);
        Assert.Equal("GET /next ", next.Body);
        Assert.Equal(2, server.SessionsCreated);
    }

    [Fact]
    public async Task HttpClientEx_is_cancelled_by_its_token_and_goes_on_with_a_new_connection()
    {
        using var server = new HttpTestServer();
        Assert.True(server.Start());
        using var client = new HttpClientEx(IPAddress.Loopback, server.BoundPort);
        using var cancel = new CancellationTokenSource(TimeSpan.FromMilliseconds(300));
        var request = new HttpRequest().MakeGetRequest("/never");
        var started = DateTime.UtcNow;
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => client.SendRequest(request, Wait.Default, cancel.Token).WaitAsync(Wait.Default));
        var took = DateTime.UtcNow - started;
        Assert.True(took < TimeSpan.FromSeconds(3), $"the cancellation took {took}");

        var next = await client.SendGetRequest("/next", Wait.Default);
        Assert.Equal("GET /next ", next.Body);
        Assert.Equal(2, server.SessionsCreated);
    }

    [Fact]
    public async Task HttpClientEx_times_out_on_a_listener_that_accepts_and_never_speaks()
    {
        using var silent = new SilentListener();
        using var client = new HttpClientEx(silent.Endpoint);
        await Assert.ThrowsAsync<TimeoutException>(() => client.SendGetRequest("/", TimeSpan.FromSeconds(1)).WaitAsync(Wait.Default));
        Assert.False(client.IsConnected);
    }

    [CurlFact]
    public async Task Curl_reuses_one_connection_for_two_urls()
    {
        using var server = new HttpTestServer();
        Assert.True(server.Start());
        var (exit, output, errors) = await Curl.RunAsync("-sS", $"http://127.0.0.1:{server.BoundPort}/one", $"http://127.0.0.1:{server.BoundPort}/two");
        Assert.True(exit == 0, errors);
        Assert.Equal("GET /one GET /two ", output);
        Assert.Equal(1, server.SessionsCreated);
    }

    [CurlFact]
    public async Task Curl_uploads_a_chunked_body()
    {
        using var server = new HttpTestServer();
        Assert.True(server.Start());
        var file = Path.GetTempFileName();
        try
        {
            var content = new string('z', 100_000);
            await File.WriteAllTextAsync(file, content);
            var (exit, output, errors) = await Curl.RunAsync("-sS", "-H", "Transfer-Encoding: chunked", "--data-binary", "@" + file, $"http://127.0.0.1:{server.BoundPort}/up");
            Assert.True(exit == 0, errors);
            Assert.Equal("POST /up " + content, output);
        }
        finally
        {
            File.Delete(file);
        }
    }

    [CurlFact]
    public async Task Curl_HEAD_gets_the_head_and_a_streamed_answer_whole()
    {
        using var server = new HttpTestServer();
        Assert.True(server.Start());
        var (exit, output, errors) = await Curl.RunAsync("-sS", "-I", $"http://127.0.0.1:{server.BoundPort}/h");
        Assert.True(exit == 0, errors);
        Assert.StartsWith("HTTP/1.1 200 OK", output);
        Assert.Contains("Content-Length: 8", output);

        (exit, output, errors) = await Curl.RunAsync("-sS", $"http://127.0.0.1:{server.BoundPort}/stream");
        Assert.True(exit == 0, errors);
        Assert.Equal(HttpTestServer.StreamBody(), output);
    }

    [CurlFact]
    public async Task Curl_gets_100_continue_for_a_large_upload()
    {
        using var server = new HttpTestServer();
        Assert.True(server.Start());
        var file = Path.GetTempFileName();
        try
        {
            await File.WriteAllTextAsync(file, new string('c', 2_000_000));
            var (exit, output, errors) = await Curl.RunAsync("-sS", "-v", "-H", "Expect: 100-continue", "--expect100-timeout", "10", "--data-binary", "@" + file, $"http://127.0.0.1:{server.BoundPort}/big");
            Assert.True(exit == 0, errors);
            Assert.Contains("HTTP/1.1 100 Continue", errors);
            Assert.Equal(2_000_000 + "POST /big ".Length, output.Length);
        }
        finally
        {
            File.Delete(file);
        }
    }
}
