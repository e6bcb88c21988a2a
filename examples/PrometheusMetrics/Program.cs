using System;
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using OpenTelemetry;
using OpenTelemetry.Metrics;

namespace NetServer.Examples.PrometheusMetrics;

/// <summary>Sends back whatever it receives.</summary>
internal sealed class EchoSession(TcpServer server) : TcpSession(server)
{
    protected override void OnReceived(ReadOnlySpan<byte> buffer) => SendAsync(buffer);

    protected override void OnError(SocketError error) => Console.WriteLine($"Session {Id} caught a socket error: {error}");
}

/// <summary>The echo server on a TCP port.</summary>
internal sealed class EchoServer(IPAddress address, int port) : TcpServer(address, port)
{
    protected override TcpSession CreateSession() => new EchoSession(this);

    protected override void OnError(SocketError error) => Console.WriteLine($"The server caught a socket error: {error}");
}

internal static class Program
{
    private const int DefaultEchoPort = 1111;

    // The port Prometheus's exporter list assigns to the OpenTelemetry exporter.
    private const int DefaultMetricsPort = 9464;

    /// <summary>
    /// Usage: PrometheusMetrics [echo port] [metrics port]; NETSERVER_ECHO_PORT and NETSERVER_METRICS_PORT
    /// stand in for missing arguments. Echo port 0 lets the system pick one; the metrics port must be a
    /// real one (HttpListener cannot bind port 0). Both listen on 127.0.0.1 only.
    /// </summary>
    private static int Main(string[] args)
    {
        var echoPort = Port(args, 0, "NETSERVER_ECHO_PORT", DefaultEchoPort);
        var metricsPort = Port(args, 1, "NETSERVER_METRICS_PORT", DefaultMetricsPort);

        // "NetServer" is the core's meter; "NetServer.*" takes the other packages' (NetServer.Protobuf, ...).
        // The exporter answers GET /metrics in Prometheus's text format, reading the instruments when scraped.
        using var meters = Sdk.CreateMeterProviderBuilder()
            .AddMeter("NetServer", "NetServer.*")
            .AddPrometheusHttpListener(options =>
            {
                options.Host = "127.0.0.1";
                options.Port = metricsPort;
            })
            .Build();

        using var server = new EchoServer(IPAddress.Loopback, echoPort) { OptionNoDelay = true };
        server.Start();
        Console.WriteLine($"Listening on {server.Endpoint}");
        Console.WriteLine($"Metrics on http://127.0.0.1:{metricsPort}/metrics");
        Console.WriteLine("Type an empty line (or end the input) to stop.");

        while (Console.ReadLine() is { Length: > 0 })
        {
        }

        server.Stop();
        Console.WriteLine("Stopped");
        return 0;
    }

    private static int Port(string[] args, int index, string variable, int fallback)
    {
        var text = args.Length > index ? args[index] : Environment.GetEnvironmentVariable(variable);
        return string.IsNullOrEmpty(text) ? fallback : int.Parse(text, CultureInfo.InvariantCulture);
    }
}
