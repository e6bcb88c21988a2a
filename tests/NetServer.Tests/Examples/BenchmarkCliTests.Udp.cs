using System;
using System.Globalization;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Examples;

/// <summary>The udp scenarios, and our UDP client and server against plain datagram peers.</summary>
public sealed partial class BenchmarkCliTests
{
    [Theory]
    [InlineData(1)]
    [InlineData(100)]
    public async Task Udp_echo_client_gets_back_what_the_server_echoed_except_the_losses_it_reports(int clients)
    {
        // 100 clients x 1000 datagrams in flight overflow the socket buffers: losses are expected, and must be counted, not failed.
        await using var bench = ProgramProcess.Start(Cli, s_timeout, "udp", "echo", "-c", clients.ToString(CultureInfo.InvariantCulture), "-z", "1", "-q");
        var result = await ResultAsync(bench);
        Assert.Equal(0, await bench.WaitForExitAsync());
        Assert.Equal(0, result.GetProperty("errors").GetInt64());
        Assert.True(result.GetProperty("totalMessages").GetInt64() > 0, "No echo was measured.");

        var d = result.GetProperty("datagrams");
        long Figure(string name) => d.GetProperty(name).GetInt64();
        var (sent, received, lost) = (Figure("sent"), Figure("received"), Figure("lost"));
        var (serverReceived, serverSent) = (Figure("serverReceived"), Figure("serverSent"));
        Assert.Equal(sent - received, lost);
        Assert.True(serverReceived <= sent, $"The server received {serverReceived} datagrams of {sent} sent.");
        Assert.True(serverSent <= serverReceived, $"The server echoed {serverSent} datagrams of {serverReceived} received.");
        Assert.True(received <= serverSent, $"The clients received {received} datagrams, the server echoed {serverSent}.");
        Assert.True(serverSent - received <= lost, $"Echoed {serverSent}, received {received}, but only {lost} reported lost.");
    }

    [Fact]
    public async Task Udp_multicast_clients_count_what_they_missed_by_the_datagrams_numbers()
    {
        await using var bench = ProgramProcess.Start(Cli, s_timeout, "udp", "multicast", "-c", "3", "-z", "1", "-q");
        var result = await ResultAsync(bench);
        Assert.Equal(0, await bench.WaitForExitAsync());
        Assert.Equal(0, result.GetProperty("errors").GetInt64());
        Assert.True(result.GetProperty("totalMessages").GetInt64() > 0, "No multicast was measured.");

        var d = result.GetProperty("datagrams");
        var (expected, received, lost) = (d.GetProperty("expected").GetInt64(), d.GetProperty("received").GetInt64(), d.GetProperty("lost").GetInt64());
        Assert.Equal(expected - received, lost);
        Assert.True(lost >= 0);
        Assert.True(expected <= 3 * d.GetProperty("serverSent").GetInt64(), $"The clients expected {expected} datagrams, more than 3 x what the server sent.");
    }

    [Fact]
    public async Task Udp_multicast_server_and_clients_run_as_separate_processes()
    {
        // The group's port must be known to both processes: one free right now.
        var port = FreeUdpPort().ToString(CultureInfo.InvariantCulture);
        await using var server = ProgramProcess.Start(Cli, s_timeout, "udp", "multicast", "--role", "server", "-p", port, "-z", "0", "-q");
        await server.WaitForLineAsync("Server listening on ");

        await using var client = ProgramProcess.Start(Cli, s_timeout, "udp", "multicast", "--role", "client", "-p", port, "-c", "2", "-z", "1", "-q");
        var result = await ResultAsync(client);
        Assert.Equal(0, await client.WaitForExitAsync());
        Assert.Equal("client", result.GetProperty("role").GetString());
        Assert.Equal(0, result.GetProperty("errors").GetInt64());
        Assert.True(result.GetProperty("totalMessages").GetInt64() > 0, "The clients received no multicast.");
        var d = result.GetProperty("datagrams");
        Assert.Equal(d.GetProperty("expected").GetInt64() - d.GetProperty("received").GetInt64(), d.GetProperty("lost").GetInt64());
    }

    [Fact]
    public async Task Our_udp_client_drives_any_datagram_echo_server()
    {
        // A plain socket that sends every datagram back to its sender, as echoref's udpserver does.
        using var echo = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
        echo.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        using var stop = new CancellationTokenSource();
        var serving = EchoDatagramsAsync(echo, stop.Token);
        try
        {
            var port = ((IPEndPoint)echo.LocalEndPoint!).Port;
            await using var client = ProgramProcess.Start(Cli, s_timeout,
                "udp", "echo", "--role", "client", "-p", port.ToString(CultureInfo.InvariantCulture), "-c", "2", "-m", "10", "-s", "16", "-z", "3", "-q"); // 3 s: one round of echoes fits even on a loaded machine
            var result = await ResultAsync(client);
            Assert.Equal(0, await client.WaitForExitAsync());
            Assert.Equal(0, result.GetProperty("errors").GetInt64());
            Assert.True(result.GetProperty("totalMessages").GetInt64() > 2 * 10, "The client measured less than one round of echoes.");
            Assert.Equal(result.GetProperty("totalBytes").GetInt64() / 16, result.GetProperty("totalMessages").GetInt64());
        }
        finally
        {
            await stop.CancelAsync();
            echo.Close();
            await serving.WaitAsync(s_timeout);
        }
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task Any_datagram_client_gets_every_datagram_back_from_our_udp_server(bool dedicatedThread)
    {
        string[] arguments = ["udp", "echo", "--role", "server", "-p", "0", "-z", "0", "-q", .. dedicatedThread ? ["--dedicated-thread"] : Array.Empty<string>()];
        await using var server = ProgramProcess.Start(Cli, s_timeout, arguments);
        var port = PortOf(await server.WaitForLineAsync("Server listening on "));

        // One datagram at a time, so none can be lost to a full buffer; each comes back unchanged.
        using var timeout = new CancellationTokenSource(s_timeout);
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
        await socket.ConnectAsync(new IPEndPoint(IPAddress.Loopback, port), timeout.Token);
        var received = new byte[2048];
        for (var round = 0; round < 200; round++)
        {
            var sent = Enumerable.Range(0, 1 + (round * 7 % 1400)).Select(i => (byte)(i + round)).ToArray();
            await socket.SendAsync(sent, SocketFlags.None, timeout.Token);
            var n = await socket.ReceiveAsync(received, SocketFlags.None, timeout.Token);
            Assert.Equal(sent, received[..n]);
        }
    }

    private static int FreeUdpPort()
    {
        using var probe = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
        probe.Bind(new IPEndPoint(IPAddress.Any, 0));
        return ((IPEndPoint)probe.LocalEndPoint!).Port;
    }

    private static async Task EchoDatagramsAsync(Socket socket, CancellationToken token)
    {
        var buffer = new byte[65536];
        EndPoint any = new IPEndPoint(IPAddress.Any, 0);
        try
        {
            while (true)
            {
                var result = await socket.ReceiveFromAsync(buffer, SocketFlags.None, any, token);
                await socket.SendToAsync(buffer.AsMemory(0, result.ReceivedBytes), SocketFlags.None, result.RemoteEndPoint, token);
            }
        }
        catch (Exception e) when (e is OperationCanceledException or SocketException or ObjectDisposedException)
        {
            // Stopped.
        }
    }
}
