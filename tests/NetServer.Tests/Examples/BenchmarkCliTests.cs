using System;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Text.Json;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Examples;

/// <summary>
/// The benchmark CLI (<c>netserver-bench</c>) as build/bench.sh and a user run it: a child process
/// on real sockets, checked through its JSON result line and exit code.
/// </summary>
public sealed class BenchmarkCliTests
{
    private const string Cli = "netserver-bench";
    private static readonly TimeSpan s_timeout = TimeSpan.FromSeconds(60);

    [Theory]
    [InlineData("tcp", "echo")]
    [InlineData("tcp", "multicast")]
    [InlineData("uds", "echo")]
    [InlineData("uds", "multicast")]
    public async Task Both_roles_in_one_process_report_traffic_and_no_error(string protocol, string scenario)
    {
        await using var bench = ProgramProcess.Start(Cli, s_timeout, protocol, scenario, "-c", "3", "-z", "1", "-q");
        var result = await ResultAsync(bench);
        Assert.Equal(0, await bench.WaitForExitAsync());

        Assert.Equal(protocol, result.GetProperty("protocol").GetString());
        Assert.Equal(scenario, result.GetProperty("scenario").GetString());
        Assert.Equal("both", result.GetProperty("role").GetString());
        Assert.Equal(3, result.GetProperty("clients").GetInt32());
        Assert.Equal(0, result.GetProperty("errors").GetInt64());
        var bytes = result.GetProperty("totalBytes").GetInt64();
        Assert.True(bytes > 0, "No traffic was measured.");
        Assert.Equal(bytes / 32, result.GetProperty("totalMessages").GetInt64());
        Assert.True(result.GetProperty("allocatedBytesPerMessage").GetDouble() >= 0);
    }

    [Fact]
    public async Task Server_and_client_roles_run_as_separate_processes()
    {
        await using var server = ProgramProcess.Start(Cli, s_timeout, "tcp", "echo", "--role", "server", "-p", "0", "-z", "0", "-q");
        var port = PortOf(await server.WaitForLineAsync("Server listening on "));

        await using var client = ProgramProcess.Start(Cli, s_timeout, "tcp", "echo", "--role", "client", "-p", port.ToString(CultureInfo.InvariantCulture), "-c", "2", "-z", "1", "-q");
        var result = await ResultAsync(client);
        Assert.Equal(0, await client.WaitForExitAsync());
        Assert.Equal("client", result.GetProperty("role").GetString());
        Assert.Equal(0, result.GetProperty("errors").GetInt64());
        Assert.True(result.GetProperty("totalMessages").GetInt64() > 0, "The client measured no echo.");
    }

    [Fact]
    public async Task Our_client_drives_any_echo_server_with_the_seed_wire_shape()
    {
        // A plain socket echo server: whatever arrives goes back. The client writes 50 x 16 bytes
        // per connection once, then bounces what it receives, and counts messages as bytes / 16.
        using var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        listener.Listen();
        using var stop = new CancellationTokenSource();
        var serving = EchoAllAsync(listener, stop.Token);
        try
        {
            var port = ((IPEndPoint)listener.LocalEndPoint!).Port;
            await using var client = ProgramProcess.Start(Cli, s_timeout, "tcp", "echo", "--role", "client", "-p", port.ToString(CultureInfo.InvariantCulture), "-c", "2", "-m", "50", "-s", "16", "-z", "1", "-q");
            var result = await ResultAsync(client);
            Assert.Equal(0, await client.WaitForExitAsync());
            Assert.Equal(0, result.GetProperty("errors").GetInt64());
            var bytes = result.GetProperty("totalBytes").GetInt64();
            Assert.True(bytes > 2 * 50 * 16, $"The client measured only {bytes} bytes of echo.");
            Assert.Equal(bytes / 16, result.GetProperty("totalMessages").GetInt64());
        }
        finally
        {
            await stop.CancelAsync();
            listener.Close();
            await serving.WaitAsync(s_timeout);
        }
    }

    [Fact]
    public async Task Any_echo_shaped_client_drives_our_server()
    {
        await using var server = ProgramProcess.Start(Cli, s_timeout, "tcp", "echo", "--role", "server", "-p", "0", "-z", "0", "-q");
        var port = PortOf(await server.WaitForLineAsync("Server listening on "));

        // 1000 x 32 bytes in flight, bounced 20 times; every byte comes back unchanged.
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await socket.ConnectAsync(new IPEndPoint(IPAddress.Loopback, port)).WaitAsync(s_timeout);
        var sent = Enumerable.Range(0, 32_000).Select(static i => (byte)(i * 7)).ToArray();
        var received = new byte[sent.Length];
        using var timeout = new CancellationTokenSource(s_timeout);
        for (var round = 0; round < 20; round++)
        {
            await socket.SendAsync(sent, SocketFlags.None, timeout.Token);
            for (var got = 0; got < received.Length;)
            {
                var n = await socket.ReceiveAsync(received.AsMemory(got), SocketFlags.None, timeout.Token);
                Assert.True(n > 0, "The server closed the connection.");
                got += n;
            }

            Assert.Equal(sent, received);
        }
    }

    [Theory]
    [InlineData("Unknown protocol", "foo", "echo")]
    [InlineData("Unknown scenario", "tcp", "bar")]
    [InlineData("Option -c needs an integer", "tcp", "echo", "-c", "abc")]
    public async Task Bad_arguments_exit_with_code_2_and_say_what_is_wrong(string message, params string[] args)
    {
        await using var bench = ProgramProcess.Start(Cli, s_timeout, args);
        Assert.Equal(2, await bench.WaitForExitAsync());
        Assert.Contains(message, bench.Transcript, StringComparison.Ordinal);
    }

    /// <summary>The JSON result line the CLI prints last.</summary>
    private static async Task<JsonElement> ResultAsync(ProgramProcess bench)
    {
        var line = await bench.WaitForLineAsync("{\"protocol\"");
        using var document = JsonDocument.Parse(line);
        return document.RootElement.Clone();
    }

    private static int PortOf(string listening)
    {
        // "Server listening on 127.0.0.1:PORT; stops ..."
        var endpoint = listening["Server listening on ".Length..].Split(';')[0];
        return IPEndPoint.Parse(endpoint).Port;
    }

    private static async Task EchoAllAsync(Socket listener, CancellationToken token)
    {
        var connections = new System.Collections.Generic.List<Task>();
        try
        {
            while (true)
            {
                var peer = await listener.AcceptAsync(token);
                connections.Add(EchoAsync(peer, token));
            }
        }
        catch (Exception e) when (e is OperationCanceledException or SocketException or ObjectDisposedException)
        {
            // Stopped.
        }

        await Task.WhenAll(connections);
    }

    private static async Task EchoAsync(Socket peer, CancellationToken token)
    {
        using (peer)
        {
            var buffer = new byte[4096];
            try
            {
                int n;
                while ((n = await peer.ReceiveAsync(buffer, SocketFlags.None, token)) > 0)
                    await peer.SendAsync(buffer.AsMemory(0, n), SocketFlags.None, token);
            }
            catch (Exception e) when (e is OperationCanceledException or SocketException or IOException)
            {
                // The client went away or the test is done.
            }
        }
    }
}
