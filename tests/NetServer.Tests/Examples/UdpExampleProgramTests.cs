using System;
using System.Diagnostics;
using System.Globalization;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using NetServer.Tests.Udp;
using Xunit;

namespace NetServer.Tests.Examples;

/// <summary>
/// The UDP examples as a user runs them: child processes driven through their consoles. The echo
/// server is checked with a raw socket, with python3 as an independent client and with the echo
/// client; the multicast pair on a random group and port per test, through the interface the
/// probe found multicast to loop back on (skipped, with the reason, where it does not).
/// </summary>
public sealed class UdpExampleProgramTests
{
    private static readonly TimeSpan s_timeout = TimeSpan.FromSeconds(10);

    [Fact]
    public async Task UdpEchoServer_echoes_raw_datagrams_unchanged_restarts_on_the_same_port_and_stops()
    {
        await using var server = ProgramProcess.Start("UdpEchoServer", "0", IPAddress.Loopback.ToString());
        var listening = await server.WaitForLineAsync("Listening on ");
        var endpoint = IPEndPoint.Parse(listening["Listening on ".Length..]);
        Assert.NotEqual(0, endpoint.Port);

        using var peer = new DatagramPeer();
        Assert.Equal("ping"u8.ToArray(), await peer.EchoAsync("ping"u8.ToArray(), endpoint));
        await server.WaitForLineAsync($"Received \"ping\" from {peer.Endpoint}");

        // Any bytes (not UTF-8 text, too) and the empty datagram come back as they went.
        var binary = Enumerable.Range(0, 1400).Select(i => (byte)(i * 7)).ToArray();
        Assert.Equal(binary, await peer.EchoAsync(binary, endpoint));
        Assert.Empty(await peer.EchoAsync([], endpoint));

        // "!" restarts on the port the system picked the first time; typed text has nowhere to go.
        await server.TypeAsync("hello?");
        await server.WaitForLineAsync("This server sends nothing of its own");
        await server.TypeAsync("!");
        await server.WaitForLineAsync("Restarting");
        Assert.Equal(listening, await server.WaitForLineAsync("Listening on "));
        Assert.Equal("pong"u8.ToArray(), await peer.EchoAsync("pong"u8.ToArray(), endpoint));

        await server.TypeAsync(string.Empty);
        Assert.Equal(0, await server.WaitForExitAsync());
        Assert.DoesNotContain("socket error", server.Transcript, StringComparison.OrdinalIgnoreCase);
    }

    [Python3Fact]
    public async Task UdpEchoServer_answers_python3_as_nc_would()
    {
        await using var server = ProgramProcess.Start("UdpEchoServer", "0", IPAddress.Loopback.ToString());
        var port = (await server.ListeningPortAsync()).ToString(CultureInfo.InvariantCulture);

        // What `nc -u 127.0.0.1 PORT` does with a typed line: one datagram with the line end.
        const string Script = """
            import socket, sys
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.settimeout(5)
            s.sendto(b"hello from python\n", ("127.0.0.1", int(sys.argv[1])))
            data, source = s.recvfrom(65535)
            sys.stdout.write("%s %s" % (source[1], data.decode()))
            """;
        var (exitCode, output, errors) = await RunPythonAsync(Script, port);
        Assert.True(exitCode == 0, $"python3 exited with {exitCode}: {errors}");
        Assert.Equal($"{port} hello from python\n", output);
        await server.WaitForLineAsync("Received \"hello from python\" from 127.0.0.1:");

        await server.TypeAsync(string.Empty);
        Assert.Equal(0, await server.WaitForExitAsync());
    }

    [Fact]
    public async Task UdpEchoClient_prints_the_echo_of_each_typed_line_reconnects_after_bang_and_quits()
    {
        await using var server = ProgramProcess.Start("UdpEchoServer", "0", IPAddress.Loopback.ToString());
        var port = (await server.ListeningPortAsync()).ToString(CultureInfo.InvariantCulture);
        await using var client = ProgramProcess.Start("UdpEchoClient", IPAddress.Loopback.ToString(), port);
        await client.WaitForLineAsync("Connected to ");

        await client.TypeAsync("hello udp");
        await client.WaitForLineAsync($"Received \"hello udp\" from 127.0.0.1:{port}");
        await server.WaitForLineAsync("Received \"hello udp\" from 127.0.0.1:");

        // "!" opens a new socket (a new local port) that talks to the same server.
        await client.TypeAsync("!");
        await client.WaitForLineAsync("Disconnected");
        await client.WaitForLineAsync("Connected to ");
        await client.TypeAsync("hello again");
        await client.WaitForLineAsync($"Received \"hello again\" from 127.0.0.1:{port}");

        // The server restarting on its port is nothing the client has to know about.
        await server.TypeAsync("!");
        await server.WaitForLineAsync("Listening on ");
        await client.TypeAsync("after the restart");
        await client.WaitForLineAsync($"Received \"after the restart\" from 127.0.0.1:{port}");

        await client.TypeAsync(string.Empty);
        await client.WaitForLineAsync("Bye");
        Assert.Equal(0, await client.WaitForExitAsync());
        await server.TypeAsync(string.Empty);
        Assert.Equal(0, await server.WaitForExitAsync());
    }

    [Fact]
    public async Task UdpEchoClient_reports_that_no_server_listens()
    {
        // A port free on an address of 127.0.0.0/8 that no other test binds, so it stays free while the client starts.
        var address = UdpTest.RebindableLoopback().Address;
        var port = FreePort(address);
        await using var client = ProgramProcess.Start("UdpEchoClient", address.ToString(), port);
        await client.WaitForLineAsync("Connected to ");

        // The system answers the datagram with "port unreachable", which the connected socket reports.
        await client.TypeAsync("anyone there?");
        await client.WaitForLineAsync($"No echo server at {address}:{port} (ConnectionRefused)");

        await client.TypeAsync(string.Empty);
        Assert.Equal(0, await client.WaitForExitAsync());
    }

    [MulticastFact(MulticastPath.IPv4Loopback)]
    public async Task UdpMulticast_typed_lines_reach_a_client_in_the_group_across_server_restarts_and_client_reconnects()
    {
        var (group, via) = NewGroup(MulticastPath.IPv4Loopback);
        await using var client = ProgramProcess.Start("UdpMulticastClient", ["0.0.0.0", group, "0", .. via]);
        var port = (await client.ListeningPortAsync()).ToString(CultureInfo.InvariantCulture); // port 0: the system picks one no other socket holds
        await client.WaitForLineAsync($"Joined {group}");

        await using var server = ProgramProcess.Start("UdpMulticastServer", [group, port, "--ttl", "1", .. via]);
        Assert.Contains("time to live 1, loopback on", await server.WaitForLineAsync($"Multicasting to {group}:{port} "), StringComparison.Ordinal);
        await server.WaitForLineAsync("Listening on ");

        await server.TypeAsync("hello group");
        await client.WaitForLineAsync("Received \"(admin) hello group\" from ");

        await server.TypeAsync("!");
        await server.WaitForLineAsync("Listening on ");
        await server.TypeAsync("after the restart");
        await client.WaitForLineAsync("Received \"(admin) after the restart\" from ");

        // A reconnect is a new socket: the client joins the group again in OnConnected.
        await client.TypeAsync("!");
        await client.WaitForLineAsync("Disconnected");
        await client.WaitForLineAsync($"Joined {group}");
        await server.TypeAsync("welcome back");
        await client.WaitForLineAsync("Received \"(admin) welcome back\" from ");

        await server.TypeAsync(string.Empty);
        Assert.Equal(0, await server.WaitForExitAsync());
        await client.TypeAsync(string.Empty);
        Assert.Equal(0, await client.WaitForExitAsync());
        Assert.DoesNotContain("error", client.Transcript, StringComparison.OrdinalIgnoreCase);
    }

    [MulticastFact(MulticastPath.IPv6Routed)]
    public async Task UdpMulticast_works_for_an_ipv6_group()
    {
        var (group, via) = NewGroup(MulticastPath.IPv6Routed);
        await using var client = ProgramProcess.Start("UdpMulticastClient", ["::", group, "0", .. via]);
        var port = (await client.ListeningPortAsync()).ToString(CultureInfo.InvariantCulture); // port 0: the system picks one no other socket holds
        await client.WaitForLineAsync($"Joined {group}");

        await using var server = ProgramProcess.Start("UdpMulticastServer", [group, port, "--ttl", "0", .. via]);
        await server.WaitForLineAsync($"Multicasting to [{group}]:{port} ");
        await server.TypeAsync("hello over ipv6");
        await client.WaitForLineAsync("Received \"(admin) hello over ipv6\" from ");

        await server.TypeAsync(string.Empty);
        Assert.Equal(0, await server.WaitForExitAsync());
        await client.TypeAsync(string.Empty);
        Assert.Equal(0, await client.WaitForExitAsync());
    }

    // Off the loopback interface: Linux's loopback interface hands every datagram back whatever IP_MULTICAST_LOOP says.
    // Time to live 0: the datagrams loop back (or not) without reaching the wire.
    [MulticastFact(MulticastPath.IPv4Routed)]
    public async Task UdpMulticastServer_with_no_loopback_is_not_heard_on_this_machine()
    {
        var (group, via) = NewGroup(MulticastPath.IPv4Routed);
        await using var client = ProgramProcess.Start("UdpMulticastClient", ["0.0.0.0", group, "0", .. via]);
        var port = (await client.ListeningPortAsync()).ToString(CultureInfo.InvariantCulture); // port 0: the system picks one no other socket holds
        await client.WaitForLineAsync($"Joined {group}");

        // The quiet server has sent (or dropped) its line once it has exited, so the loud server's line comes later.
        await using (var quiet = ProgramProcess.Start("UdpMulticastServer", [group, port, "--ttl", "0", "--no-loopback", .. via]))
        {
            Assert.Contains("loopback off", await quiet.WaitForLineAsync("Multicasting to "), StringComparison.Ordinal);
            await quiet.TypeAsync("unheard");
            await quiet.TypeAsync(string.Empty);
            Assert.Equal(0, await quiet.WaitForExitAsync());
        }

        await using var loud = ProgramProcess.Start("UdpMulticastServer", [group, port, "--ttl", "0", .. via]);
        await loud.WaitForLineAsync("Listening on ");
        await loud.TypeAsync("heard");
        await client.WaitForLineAsync("Received \"(admin) heard\" from ");
        Assert.DoesNotContain("unheard", client.Transcript, StringComparison.Ordinal);

        await loud.TypeAsync(string.Empty);
        Assert.Equal(0, await loud.WaitForExitAsync());
        await client.TypeAsync(string.Empty);
        Assert.Equal(0, await client.WaitForExitAsync());
    }

    /// <summary>A random group of the path's kind and the --interface option for the path's interface.</summary>
    private static (string Group, string[] Via) NewGroup(MulticastPath path)
    {
        var route = MulticastRoute.Get(path);
        string[] via = route.InterfaceIndex == 0 ? [] : ["--interface", route.InterfaceIndex.ToString(CultureInfo.InvariantCulture)];
        return (route.NewGroup().ToString(), via);
    }

    /// <summary>A UDP port of <paramref name="address"/> that was free a moment ago (the system picked it for a socket now closed).</summary>
    private static string FreePort(IPAddress address)
    {
        using var socket = new Socket(address.AddressFamily, SocketType.Dgram, ProtocolType.Udp);
        socket.Bind(new IPEndPoint(address, 0));
        return ((IPEndPoint)socket.LocalEndPoint!).Port.ToString(CultureInfo.InvariantCulture);
    }

    /// <summary>Runs <c>python3 -c script args</c> to its end (bounded); returns its exit code, stdout and stderr.</summary>
    private static async Task<(int ExitCode, string Output, string Errors)> RunPythonAsync(string script, params string[] args)
    {
        var info = new ProcessStartInfo("python3")
        {
            UseShellExecute = false,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            StandardOutputEncoding = Encoding.UTF8,
        };
        info.ArgumentList.Add("-c");
        info.ArgumentList.Add(script);
        foreach (var arg in args)
            info.ArgumentList.Add(arg);

        using var python = Process.Start(info) ?? throw new InvalidOperationException("python3 did not start");
        var output = python.StandardOutput.ReadToEndAsync();
        var errors = python.StandardError.ReadToEndAsync();
        try
        {
            using var timeout = new CancellationTokenSource(s_timeout);
            await python.WaitForExitAsync(timeout.Token);
        }
        catch (OperationCanceledException)
        {
            python.Kill(entireProcessTree: true);
            Assert.Fail($"python3 did not exit within {s_timeout.TotalSeconds} s.");
        }

        return (python.ExitCode, await output.WaitAsync(s_timeout), await errors.WaitAsync(s_timeout));
    }

    /// <summary>A raw UDP socket on the loopback address, as any other program would use.</summary>
    private sealed class DatagramPeer : IDisposable
    {
        private readonly Socket _socket = new(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
        private readonly byte[] _buffer = new byte[UdpPeer.MaxDatagramPayload];

        public DatagramPeer() => _socket.Bind(new IPEndPoint(IPAddress.Loopback, 0));

        public EndPoint Endpoint => _socket.LocalEndPoint!;

        /// <summary>Sends <paramref name="datagram"/> to <paramref name="server"/> and returns the datagram that comes back from it (bounded).</summary>
        public async Task<byte[]> EchoAsync(byte[] datagram, IPEndPoint server)
        {
            using var timeout = new CancellationTokenSource(s_timeout);
            await _socket.SendToAsync(datagram, SocketFlags.None, server, timeout.Token);
            var result = await _socket.ReceiveFromAsync(_buffer, SocketFlags.None, new IPEndPoint(IPAddress.Any, 0), timeout.Token);
            Assert.Equal(server, result.RemoteEndPoint);
            return _buffer.AsSpan(0, result.ReceivedBytes).ToArray();
        }

        public void Dispose() => _socket.Dispose();
    }
}
