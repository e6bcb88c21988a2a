using System;
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Text.Json;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Examples;

/// <summary>
/// The benchmark CLI's sudp protocol (secure UDP echo) as build/bench.sh runs it: both roles in one
/// process in both I/O modes, server and client as separate processes sharing --key (and a secure
/// client of the test's own with one of the server's sessions), and its argument checks.
/// </summary>
public sealed class BenchmarkCliSecureUdpTests
{
    private const string Cli = "netserver-bench";
    private static readonly TimeSpan s_timeout = TimeSpan.FromSeconds(60);

    [Theory]
    [InlineData(1, false)]
    [InlineData(3, true)]
    public async Task Sudp_echo_in_one_process_reports_traffic_and_no_error(int clients, bool dedicatedThread)
    {
        string[] arguments = ["sudp", "echo", "-c", clients.ToString(CultureInfo.InvariantCulture), "-z", "1", "-q", .. dedicatedThread ? ["--dedicated-thread"] : Array.Empty<string>()];
        await using var bench = ProgramProcess.Start(Cli, s_timeout, arguments);
        var result = await ResultAsync(bench);
        Assert.Equal(0, await bench.WaitForExitAsync());
        Assert.Equal("sudp", result.GetProperty("protocol").GetString());
        Assert.Equal(0, result.GetProperty("errors").GetInt64());
        Assert.True(result.GetProperty("totalMessages").GetInt64() > 0, "No echo was measured.");
        Assert.Equal(result.GetProperty("totalBytes").GetInt64() / 32, result.GetProperty("totalMessages").GetInt64());
        var d = result.GetProperty("datagrams");
        Assert.Equal(d.GetProperty("sent").GetInt64() - d.GetProperty("received").GetInt64(), d.GetProperty("lost").GetInt64());
    }

    [Fact]
    public async Task A_sudp_server_and_client_in_two_processes_share_the_key_and_a_session_of_it_opens_the_echo()
    {
        var key = Convert.ToHexString(SecureUdpSession.NewSecret());
        await using var server = ProgramProcess.Start(Cli, s_timeout, "sudp", "echo", "--role", "server", "-p", "0", "-z", "0", "-q", "-c", "3", "--key", key);
        var listening = await server.WaitForLineAsync("Server listening on ");
        var port = IPEndPoint.Parse(listening["Server listening on ".Length..].Split(';')[0]).Port;

        await using (var client = ProgramProcess.Start(Cli, s_timeout, "sudp", "echo", "--role", "client", "-p", port.ToString(CultureInfo.InvariantCulture), "-c", "2", "-m", "10", "-z", "2", "-q", "--key", key))
        {
            var result = await ResultAsync(client);
            Assert.Equal(0, await client.WaitForExitAsync());
            Assert.Equal(0, result.GetProperty("errors").GetInt64());
            Assert.True(result.GetProperty("totalMessages").GetInt64() > 2 * 10, "The clients measured less than one round of echoes.");
        }

        // The documented sessions (benchmarks/NetServer.Benchmark/SecurePeers.cs): the server holds one for client 2,
        // which no client process used; client i receives on index i + 1, the server on 0x80000000 + i.
        using var session = new SecureUdpSession(Convert.FromHexString(key), "netserver-bench sudp client 2"u8, SecureUdpRole.Initiator, 3, 0x8000_0002);
        using var timeout = new CancellationTokenSource(s_timeout);
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
        await socket.ConnectAsync(new IPEndPoint(IPAddress.Loopback, port), timeout.Token);
        var datagram = new byte[64];
        var length = session.Seal(SecureDatagramType.Data, "hello"u8, datagram);
        await socket.SendAsync(datagram.AsMemory(0, length), SocketFlags.None, timeout.Token);
        var n = await socket.ReceiveAsync(datagram, SocketFlags.None, timeout.Token);
        Assert.Equal(SecureDatagramStatus.Ok, session.Open(datagram.AsSpan(0, n), out var type, out var payload));
        Assert.Equal(SecureDatagramType.Data, type);
        Assert.Equal("hello"u8.ToArray(), datagram.AsSpan(SecureUdpSession.HeaderLength, payload).ToArray());
    }

    [Theory]
    [InlineData("sudp has no multicast", "sudp", "multicast")]
    [InlineData("sudp has no latency", "sudp", "latency")]
    [InlineData("needs --key", "sudp", "echo", "--role", "server")]
    [InlineData("--key is for sudp", "udp", "echo", "--key", "00")]
    [InlineData("--key is for sudp", "sudp", "echo", "--key", "abcd")]
    [InlineData("holds at most 65497 bytes", "sudp", "echo", "-s", "65500")]
    public async Task Bad_sudp_arguments_exit_with_code_2_and_say_what_is_wrong(string message, params string[] args)
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
}
