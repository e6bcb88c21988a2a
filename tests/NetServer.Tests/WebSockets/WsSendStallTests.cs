using System;
using System.Net;
using System.Net.Sockets;
using System.Net.WebSockets;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.WebSockets;

/// <summary>
/// A WebSocket echo session whose client sends frames and never reads is paused by its send
/// backlog and cut off after OptionSendStallTimeout, as a stream session is (found by the soak's
/// slow attack: non-reading WebSocket clients held 2 MB each for ever).
/// </summary>
public sealed class WsSendStallTests
{
    private sealed class StallServer(Action<StallSession> connected) : WsServer(new IPEndPoint(IPAddress.Loopback, 0))
    {
        protected override TcpSession CreateSession() => new StallSession(this, connected);
    }

    private sealed class StallSession(WsServer server, Action<StallSession> connected) : WsSession(server)
    {
        public TaskCompletionSource<DisconnectReason> Ended { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public override void OnWsConnected(HttpRequest request)
        {
            OptionSendStallTimeout = TimeSpan.FromSeconds(1);
            connected(this);
        }

        public override void OnWsReceived(WebSocketMessageType type, byte[] buffer, long offset, long size) => SendBinaryAsync(buffer, offset, size);

        public override void OnWsDisconnected() => Ended.TrySetResult(DisconnectReason);
    }

    [Fact]
    public async Task A_client_that_sends_and_never_reads_is_cut_off()
    {
        var opened = new TaskCompletionSource<StallSession>(TaskCreationOptions.RunContinuationsAsynchronously);
        using var server = new StallServer(session => opened.TrySetResult(session));
        Assert.True(server.Start());
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { ReceiveBufferSize = 64 * 1024 };
        await socket.ConnectAsync(server.Endpoint).WaitAsync(Wait.Default);
        using var client = new WsRawClient(socket);
        Assert.StartsWith("HTTP/1.1 101 ", await client.UpgradeAsync(), StringComparison.Ordinal);
        var session = await opened.Task.WaitAsync(Wait.Default);

        var frame = WsWire.Frame(WsWire.Binary, new byte[16 * 1024]);
        using var stop = new CancellationTokenSource();
        var writer = Task.Run(async () =>
        {
            try
            {
                while (!stop.IsCancellationRequested)
                    await socket.SendAsync(frame, SocketFlags.None, stop.Token);
            }
            catch (Exception e) when (e is SocketException or ObjectDisposedException or OperationCanceledException)
            {
            }
        });

        await Wait.UntilAsync(() => session.IsReceivingPaused || session.Ended.Task.IsCompleted, "the send backlog to pause receiving");
        var reason = await session.Ended.Task.WaitAsync(TimeSpan.FromSeconds(15));
        stop.Cancel();
        Assert.Equal(DisconnectReason.TimedOut, reason);
        Assert.Contains("OptionSendStallTimeout", session.DisconnectException?.Message ?? string.Empty, StringComparison.Ordinal);
        Assert.True(server.ConnectedSessions == 0 || await WaitNoSessionsAsync(server));
    }

    private static async Task<bool> WaitNoSessionsAsync(WsServer server)
    {
        await Wait.UntilAsync(() => server.ConnectedSessions == 0, "the session to leave the server");
        return true;
    }
}
