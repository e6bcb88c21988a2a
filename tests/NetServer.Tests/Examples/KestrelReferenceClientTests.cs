using System;
using System.Globalization;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Examples;

/// <summary>HttpClientEx and HttpsClientEx against Kestrel (benchmarks/KestrelReference, run as a child process): a server we did not write.</summary>
public sealed class KestrelReferenceClientTests
{
    private static readonly TimeSpan s_timeout = TimeSpan.FromSeconds(30);

    private static int PortOf(string line) =>
        int.Parse(line[(line.LastIndexOf(':') + 1)..].TrimEnd('/'), NumberStyles.None, CultureInfo.InvariantCulture);

    [Net10Fact("kestrel-reference is built for net10.0 next to the tests.")]
    public async Task HttpClientEx_gets_GET_HEAD_and_TRACE_answers_from_Kestrel_over_one_connection()
    {
        await using var kestrel = ProgramProcess.Start("kestrel-reference", s_timeout, "--port", "0", "--body", "from kestrel");
        var port = PortOf(await kestrel.WaitForLineAsync("listening on http://"));
        using var client = new HttpClientEx(System.Net.IPAddress.Loopback, port);

        var get = await client.SendGetRequest("/any", s_timeout);
        Assert.Equal(200, get.Status);
        Assert.Equal("from kestrel", get.Body);

        var head = await client.SendHeadRequest("/any", s_timeout);
        Assert.Equal(200, head.Status);
        Assert.True(head.TryGetHeader("Content-Length", out var length) && length == "12");
        Assert.Equal(0, head.BodyLength);

        // TRACE echoes the request head as Kestrel received it: the Host field the client added is there.
        var trace = await client.SendTraceRequest("/t", s_timeout);
        Assert.Equal(200, trace.Status);
        Assert.Contains("TRACE /t HTTP/1.1", trace.Body);
        Assert.Contains($"Host: 127.0.0.1:{port}", trace.Body);

        // After the HEAD (a head without its body), the connection still frames the next answer right.
        Assert.Equal("from kestrel", (await client.SendGetRequest("/again", s_timeout)).Body);
        Assert.True(client.IsConnected);
    }

    [Net10Fact("kestrel-reference is built for net10.0 next to the tests.")]
    public async Task HttpsClientEx_gets_an_answer_from_Kestrel_over_tls()
    {
        var certs = System.IO.Path.Combine(FindRepository(), "certs");
        await using var kestrel = ProgramProcess.Start("kestrel-reference", s_timeout, "--port", "0", "--https", "--certs", certs);
        var port = PortOf(await kestrel.WaitForLineAsync("listening on https://"));
        var context = new SslContext();
        context.TrustedCertificateAuthorities.Add(System.Security.Cryptography.X509Certificates.X509CertificateLoader.LoadCertificateFromFile(System.IO.Path.Combine(certs, "ca.pem")));
        using var client = new HttpsClientEx(context, new System.Net.DnsEndPoint("localhost", port));
        var get = await client.SendGetRequest("/", s_timeout);
        Assert.Equal(200, get.Status);
        Assert.Equal("Hello, World!", get.Body);
        Assert.Equal("Hello, World!", (await client.SendGetRequest("/2", s_timeout)).Body);
    }

    private static string FindRepository()
    {
        for (var folder = new System.IO.DirectoryInfo(AppContext.BaseDirectory); folder is not null; folder = folder.Parent)
        {
            if (System.IO.File.Exists(System.IO.Path.Combine(folder.FullName, "certs", "ca.pem")))
                return folder.FullName;
        }

        throw new InvalidOperationException("certs/ca.pem not found above " + AppContext.BaseDirectory);
    }
}
