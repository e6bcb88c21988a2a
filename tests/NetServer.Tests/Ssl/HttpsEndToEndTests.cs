using System;
using System.IO;
using System.Net;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Ssl;

/// <summary>
/// HTTPS end to end (in Ssl/ because the netstandard2.0 build has no TLS): curl and HttpsClientEx
/// against an HttpsServer with the in-process test certificates.
/// </summary>
public sealed class HttpsEndToEndTests : IDisposable
{
    private readonly string _caPath = Path.Combine(Path.GetTempPath(), "netserver-https-ca-" + Guid.NewGuid().ToString("N") + ".pem");

    public HttpsEndToEndTests() => TestCertificates.ExportPem(TestCertificates.Authority, _caPath);

    public void Dispose() => File.Delete(_caPath);

    private sealed class EchoServer() : HttpsServer(TestCertificates.ServerContext(), new IPEndPoint(IPAddress.Loopback, 0))
    {
        private int _sessions;

        public int BoundPort => ((IPEndPoint)Endpoint).Port;

        public int SessionsCreated => Volatile.Read(ref _sessions);

        protected override SslSession CreateSession()
        {
            Interlocked.Increment(ref _sessions);
            return new EchoSession(this);
        }
    }

    private sealed class EchoSession(HttpsServer server) : HttpsSession(server)
    {
        protected override void OnReceivedRequest(HttpRequest request)
        {
            if (request.Url == "/stream")
            {
                Response.SetBegin(200).SetHeader("Transfer-Encoding", "chunked").SetBodyLength(0);
                SendResponseAsync(Response);
                for (var i = 0; i < 50; i++)
                    SendResponseBodyAsync(new string((char)('a' + (i % 26)), 1000));
                SendResponseBodyEnd();
                return;
            }

            SendResponseAsync(Response.MakeGetResponse(request.Method + " " + request.Url + " " + request.Body));
        }
    }

    private static string StreamBody()
    {
        var text = new System.Text.StringBuilder();
        for (var i = 0; i < 50; i++)
            text.Append((char)('a' + (i % 26)), 1000);
        return text.ToString();
    }

    [CurlFact]
    public async Task Curl_over_https_reuses_the_connection_and_reads_a_chunked_answer()
    {
        using var server = new EchoServer();
        Assert.True(server.Start());
        var (exit, output, errors) = await Curl.RunAsync("-sS", "--cacert", _caPath,
            $"https://127.0.0.1:{server.BoundPort}/one", $"https://127.0.0.1:{server.BoundPort}/stream");
        Assert.True(exit == 0, errors);
        Assert.Equal("GET /one " + StreamBody(), output);
        Assert.Equal(1, server.SessionsCreated);
    }

    [CurlFact]
    public async Task Curl_over_https_uploads_chunked_and_gets_a_HEAD()
    {
        using var server = new EchoServer();
        Assert.True(server.Start());
        var file = Path.GetTempFileName();
        try
        {
            await File.WriteAllTextAsync(file, new string('u', 70_000));
            var (exit, output, errors) = await Curl.RunAsync("-sS", "--cacert", _caPath, "-H", "Transfer-Encoding: chunked", "--data-binary", "@" + file, $"https://127.0.0.1:{server.BoundPort}/up");
            Assert.True(exit == 0, errors);
            Assert.Equal("POST /up " + new string('u', 70_000), output);

            (exit, output, errors) = await Curl.RunAsync("-sS", "--cacert", _caPath, "-I", $"https://127.0.0.1:{server.BoundPort}/h");
            Assert.True(exit == 0, errors);
            Assert.StartsWith("HTTP/1.1 200 OK", output);
        }
        finally
        {
            File.Delete(file);
        }
    }

    [Fact]
    public async Task HttpsClientEx_gets_answers_over_one_connection_and_times_out_on_a_silent_server()
    {
        using var server = new EchoServer();
        Assert.True(server.Start());
        using (var client = new HttpsClientEx(TestCertificates.ClientContext(), new IPEndPoint(IPAddress.Loopback, server.BoundPort)))
        {
            Assert.Equal("GET /a ", (await client.SendGetRequest("/a", Wait.Default)).Body);
            Assert.Equal(StreamBody(), (await client.SendGetRequest("/stream", Wait.Default)).Body);
            Assert.Equal("POST /b x", (await client.SendPostRequest("/b", "x", Wait.Default)).Body);
            Assert.Equal(1, server.SessionsCreated);
        }

        using var silent = new SilentListener();
        using var stuck = new HttpsClientEx(TestCertificates.ClientContext(), silent.Endpoint);
        await Assert.ThrowsAsync<TimeoutException>(() => stuck.SendGetRequest("/", TimeSpan.FromSeconds(1)).WaitAsync(Wait.Default));
    }
}
