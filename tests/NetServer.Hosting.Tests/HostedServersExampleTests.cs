using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Net.WebSockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Hosting.Tests;

/// <summary>examples/HostedServers run as a process: its three servers answer, configuration comes from the environment, SIGTERM stops it gracefully.</summary>
public sealed class HostedServersExampleTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(15);

    private static async Task<IPEndPoint> ListeningAsync(ProgramProcess program, string server)
    {
        // Console logger, single line: "info: NetServer.tcp[1001] tcp listening on 127.0.0.1:40463".
        var line = await program.WaitForLineAsync($"info: NetServer.{server}[{NetServerLogEvents.Listening}] ");
        return IPEndPoint.Parse(line[(line.LastIndexOf(' ') + 1)..]);
    }

    private static Task<int> ReceiveAsync(Socket socket, byte[] buffer) => SocketReads.FillAsync(socket, buffer, Timeout);

    [Fact]
    public async Task TcpHttpAndWebSocket_InOneHost_ThenSigtermExitsGracefully()
    {
        var environment = new Dictionary<string, string>
        {
            // appsettings.json says ports 9000, 9080, 9081; the environment overrides them (and the TCP limit).
            ["NetServer__tcp__Port"] = "0",
            ["NetServer__tcp__MaxSessions"] = "1",
            ["NetServer__http__Port"] = "0",
            ["NetServer__ws__Port"] = "0",
        };
        await using var program = ProgramProcess.Start("HostedServers", environment);
        var tcp = await ListeningAsync(program, "tcp");
        var http = await ListeningAsync(program, "http");
        var ws = await ListeningAsync(program, "ws");

        // TCP echo.
        using var echo = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await echo.ConnectAsync(tcp).WaitAsync(Timeout);
        await echo.SendAsync("ping"u8.ToArray(), SocketFlags.None).WaitAsync(Timeout);
        var echoed = new byte[4];
        Assert.Equal(4, await ReceiveAsync(echo, echoed));
        Assert.Equal("ping", Encoding.ASCII.GetString(echoed));

        // A second TCP connection is over MaxSessions=1 from the environment: closed, and logged as refused.
        using (var refused = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp))
        {
            await refused.ConnectAsync(tcp).WaitAsync(Timeout);
            await program.WaitForLineAsync($"warn: NetServer.tcp[{NetServerLogEvents.AcceptRefused}] ");
        }

        // HTTP.
        using (var client = new System.Net.Http.HttpClient { Timeout = Timeout })
            Assert.Equal("Hello from NetServer.Hosting: /greeting", await client.GetStringAsync(new Uri($"http://{http}/greeting")));

        // WebSocket echo, closed by the client with a close handshake.
        using (var socket = new ClientWebSocket())
        {
            using var cancel = new CancellationTokenSource(Timeout);
            await socket.ConnectAsync(new Uri($"ws://{ws}/"), cancel.Token);
            await socket.SendAsync("hello ws"u8.ToArray(), WebSocketMessageType.Text, endOfMessage: true, cancel.Token);
            var buffer = new byte[64];
            var message = await socket.ReceiveAsync(buffer, cancel.Token);
            Assert.Equal("hello ws", Encoding.UTF8.GetString(buffer, 0, message.Count));
            await socket.CloseAsync(WebSocketCloseStatus.NormalClosure, "bye", cancel.Token);
        }

        // SIGTERM with the TCP connection still open: the host closes it (the peer sees the end and closes too), then exits 0.
        var closedByServer = Task.Run(async () =>
        {
            var read = await ReceiveAsync(echo, new byte[1]);
            echo.Close();
            return read;
        });
        using (var kill = Process.Start("kill", ["-TERM", program.ProcessId.ToString(System.Globalization.CultureInfo.InvariantCulture)]))
            await kill.WaitForExitAsync().WaitAsync(Timeout);
        Assert.Equal(0, await closedByServer);
        Assert.Equal(0, await program.WaitForExitAsync());
        Assert.Contains($"NetServer.tcp[{NetServerLogEvents.Stopped}] tcp stopped listening on {tcp}", program.Transcript, StringComparison.Ordinal);
    }
}
