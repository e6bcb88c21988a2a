using System;
using System.Globalization;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Text.RegularExpressions;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Examples;

/// <summary>
/// examples/PrometheusMetrics: the core's instruments, read by OpenTelemetry and scraped in
/// Prometheus's text format by curl while echo connections are open.
/// </summary>
public sealed class PrometheusMetricsExampleTests
{
    private const int Connections = 3;
    private const int MessageSize = 1000;

    [CurlFact]
    public async Task The_scrape_shows_the_open_connections_and_the_bytes_echoed()
    {
        var metricsPort = FreeTcpPort();
        await using var program = ProgramProcess.Start("PrometheusMetrics", TimeSpan.FromSeconds(30), "0", metricsPort);
        var echoPort = await program.ListeningPortAsync();
        await program.WaitForLineAsync("Metrics on ");

        var clients = new Socket[Connections];
        try
        {
            var message = Enumerable.Range(0, MessageSize).Select(i => (byte)i).ToArray();
            for (var i = 0; i < Connections; i++)
            {
                clients[i] = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
                await clients[i].ConnectAsync(IPAddress.Loopback, echoPort).WaitAsync(Wait.Default);
                await clients[i].SendAsync(message, SocketFlags.None).WaitAsync(Wait.Default);
                var echoed = new byte[MessageSize];
                for (var read = 0; read < MessageSize;)
                {
                    var n = await clients[i].ReceiveAsync(echoed.AsMemory(read)).AsTask().WaitAsync(Wait.Default);
                    Assert.True(n > 0, "The echo server closed the connection.");
                    read += n;
                }

                Assert.Equal(message, echoed);
            }

            var (exitCode, scrape, errors) = await Curl.RunAsync("-sS", "--max-time", "10", $"http://127.0.0.1:{metricsPort}/metrics");
            Assert.True(exitCode == 0, $"curl exited with {exitCode}: {errors}");

            // netserver.active_connections (an UpDownCounter: a gauge) counts server sessions; the test's sockets are not NetServer clients.
            Assert.Equal(Connections, Sample(scrape, "netserver_active_connections"));

            // netserver.io (unit "By"): bytes received and sent by the started server, each at least what was echoed.
            Assert.True(Sample(scrape, "netserver_io_bytes_total", "network_io_direction=\"receive\"") >= Connections * MessageSize, scrape);
            Assert.True(Sample(scrape, "netserver_io_bytes_total", "network_io_direction=\"transmit\"") >= Connections * MessageSize, scrape);
        }
        finally
        {
            foreach (var client in clients)
                client?.Dispose();
        }
    }

    /// <summary>The value of the one sample of <paramref name="metric"/> whose labels contain <paramref name="label"/>.</summary>
    private static double Sample(string scrape, string metric, string label = "")
    {
        var samples = scrape.Split('\n')
            .Where(line => line.StartsWith(metric + "{", StringComparison.Ordinal) || line.StartsWith(metric + " ", StringComparison.Ordinal))
            .Where(line => line.Contains(label, StringComparison.Ordinal))
            .ToArray();
        Assert.True(samples.Length == 1, $"Expected one {metric} sample with '{label}', found {samples.Length}:\n{scrape}");
        var value = Regex.Match(samples[0], @"\}?\s+(\S+)(\s+\d+)?$").Groups[1].Value;
        return double.Parse(value, CultureInfo.InvariantCulture);
    }

    /// <summary>A TCP port that was free a moment ago (HttpListener cannot bind port 0 and report it).</summary>
    private static string FreeTcpPort()
    {
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        socket.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        return ((IPEndPoint)socket.LocalEndPoint!).Port.ToString(CultureInfo.InvariantCulture);
    }
}
