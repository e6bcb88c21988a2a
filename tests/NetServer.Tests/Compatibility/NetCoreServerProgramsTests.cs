using System;
using System.IO;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Streams;
using NetServer.Tests.Infrastructure;
using Xunit;
using SslEcho = NetCoreServerPrograms.SslEcho;
using SslMulticast = NetCoreServerPrograms.SslMulticast;
using TcpEcho = NetCoreServerPrograms.TcpEcho;
using TcpMulticast = NetCoreServerPrograms.TcpMulticast;
using UdpEcho = NetCoreServerPrograms.UdpEcho;
using UdsEcho = NetCoreServerPrograms.UdsEcho;
using UdsMulticast = NetCoreServerPrograms.UdsMulticast;
using WsEcho = NetCoreServerPrograms.WsEcho;
using WsMulticast = NetCoreServerPrograms.WsMulticast;
using WssEcho = NetCoreServerPrograms.WssEcho;
using WssMulticast = NetCoreServerPrograms.WssMulticast;

namespace NetServer.Tests.Compatibility;

/// <summary>
/// Runs our mirrors of NetCoreServer's benchmark programs (tests/NetServer.Tests.NetCoreServerPrograms):
/// server and clients for a moment each, checking that they work as the originals do against
/// NetCoreServer: the clients connect, exchange data without errors and report through
/// <see cref="Utilities"/>; the multicast server's per-session cap holds.
/// </summary>
public class NetCoreServerProgramsTests
{
    private static readonly TimeSpan Moment = TimeSpan.FromMilliseconds(500);

    [Fact]
    public async Task TcpEcho_clients_get_their_messages_echoed_and_report_them()
    {
        var server = TcpEcho.Program.StartServer(IPAddress.Loopback, 0);
        try
        {
            var report = await TcpEcho.Program.RunClientsAsync("127.0.0.1", Port(server), clients: 4, messages: 10, size: 32, Moment).WaitAsync(Wait.Default);
            AssertWorked(report);

            Assert.True(TcpEcho.Program.Command(server, "!"));
            Assert.True(server.IsStarted);
            report = await TcpEcho.Program.RunClientsAsync("127.0.0.1", Port(server), clients: 1, messages: 1, size: 32, Moment).WaitAsync(Wait.Default);
            AssertWorked(report);
            Assert.False(TcpEcho.Program.Command(server, string.Empty));
            Assert.False(server.IsStarted);
        }
        finally
        {
            server.Dispose();
        }
    }

    [Fact]
    public async Task TcpMulticast_clients_receive_the_multicasts()
    {
        var server = TcpMulticast.Program.StartServer(IPAddress.Loopback, 0);
        using var stop = new CancellationTokenSource();
        var multicasting = TcpMulticast.Program.MulticastAsync(server, messagesRate: 10_000, messageSize: 32, stop.Token);
        try
        {
            var report = await TcpMulticast.Program.RunClientsAsync("127.0.0.1", Port(server), clients: 4, size: 32, Moment).WaitAsync(Wait.Default);
            AssertWorked(report);
        }
        finally
        {
            await stop.CancelAsync();
            await multicasting.WaitAsync(Wait.Default);
            Assert.False(TcpMulticast.Program.Command(server, string.Empty));
            server.Dispose();
        }
    }

    [Fact]
    public async Task UdsEcho_clients_get_their_messages_echoed()
    {
        var path = Path.Combine(Path.GetTempPath(), "netserver-" + Guid.NewGuid().ToString("N")[..12] + ".sock");
        var server = UdsEcho.Program.StartServer(path);
        try
        {
            AssertWorked(await UdsEcho.Program.RunClientsAsync(path, clients: 4, messages: 10, size: 32, Moment).WaitAsync(Wait.Default));
        }
        finally
        {
            Assert.False(UdsEcho.Program.Command(server, string.Empty));
            server.Dispose();
        }
    }

    [Fact]
    public async Task SslEcho_clients_get_their_messages_echoed()
    {
        var server = SslEcho.Program.StartServer(TestCertificates.Server, IPAddress.Loopback, 0);
        try
        {
            AssertWorked(await SslEcho.Program.RunClientsAsync(TestCertificates.Client, "127.0.0.1", Port(server), clients: 2, messages: 10, size: 32, Moment).WaitAsync(Wait.Default));
        }
        finally
        {
            server.Dispose();
        }
    }

    [Fact]
    public async Task UdpEcho_client_gets_its_datagrams_echoed()
    {
        var server = UdpEcho.Program.StartServer(IPAddress.Loopback, 0);
        try
        {
            var port = ((IPEndPoint)server.Endpoint).Port;
            var report = await UdpEcho.Program.RunClientsAsync("127.0.0.1", port, clients: 1, messages: 10, size: 32, Moment).WaitAsync(Wait.Default);
            AssertWorked(report);
        }
        finally
        {
            Assert.False(UdpEcho.Program.Command(server, string.Empty));
            server.Dispose();
        }
    }

    [Fact]
    public async Task WsEcho_clients_upgrade_with_their_hand_written_request_and_get_their_messages_echoed()
    {
        var server = WsEcho.Program.StartServer(IPAddress.Loopback, 0);
        try
        {
            AssertWorked(await WsEcho.Program.RunClientsAsync("127.0.0.1", Port(server), clients: 4, messages: 10, size: 32, Moment).WaitAsync(Wait.Default));

            Assert.True(WsEcho.Program.Command(server, "!"));
            Assert.True(server.IsStarted);
            AssertWorked(await WsEcho.Program.RunClientsAsync("127.0.0.1", Port(server), clients: 1, messages: 1, size: 32, Moment).WaitAsync(Wait.Default));
            Assert.False(WsEcho.Program.Command(server, string.Empty));
            Assert.False(server.IsStarted);
        }
        finally
        {
            server.Dispose();
        }
    }

    [Fact]
    public async Task WsMulticast_clients_receive_the_binary_multicasts()
    {
        var server = WsMulticast.Program.StartServer(IPAddress.Loopback, 0);
        using var stop = new CancellationTokenSource();
        var multicasting = WsMulticast.Program.MulticastAsync(server, messagesRate: 10_000, messageSize: 32, stop.Token);
        try
        {
            AssertWorked(await WsMulticast.Program.RunClientsAsync("127.0.0.1", Port(server), clients: 4, size: 32, Moment).WaitAsync(Wait.Default));
        }
        finally
        {
            await stop.CancelAsync();
            await multicasting.WaitAsync(Wait.Default);
            Assert.False(WsMulticast.Program.Command(server, string.Empty));
            server.Dispose();
        }
    }

    [Fact]
    public async Task WssEcho_clients_get_their_messages_echoed()
    {
        var server = WssEcho.Program.StartServer(TestCertificates.Server, IPAddress.Loopback, 0);
        try
        {
            AssertWorked(await WssEcho.Program.RunClientsAsync(TestCertificates.Client, "127.0.0.1", Port(server), clients: 2, messages: 10, size: 32, Moment).WaitAsync(Wait.Default));
        }
        finally
        {
            server.Dispose();
        }
    }

    [Fact]
    public async Task WssMulticast_clients_receive_the_binary_multicasts()
    {
        var server = WssMulticast.Program.StartServer(TestCertificates.Server, IPAddress.Loopback, 0);
        using var stop = new CancellationTokenSource();
        var multicasting = WssMulticast.Program.MulticastAsync(server, messagesRate: 10_000, messageSize: 32, stop.Token);
        try
        {
            AssertWorked(await WssMulticast.Program.RunClientsAsync(TestCertificates.Client, "127.0.0.1", Port(server), clients: 2, size: 32, Moment).WaitAsync(Wait.Default));
        }
        finally
        {
            await stop.CancelAsync();
            await multicasting.WaitAsync(Wait.Default);
            server.Dispose();
        }
    }

    /// <summary>
    /// NetCoreServer's multicast clients end with CloseAsync(100), which NetCoreServer sends as is;
    /// 100 may not travel in a close frame (RFC 6455 7.4.2: a conforming peer fails the connection
    /// with 1002), so ours sends a close frame without a status, the server answers it, and the
    /// program ends as it does with NetCoreServer.
    /// </summary>
    [Fact]
    public async Task The_ws_multicast_benchmarks_close_status_100_goes_out_as_a_close_without_status()
    {
        var server = WsMulticast.Program.StartServer(IPAddress.Loopback, 0);
        try
        {
            using var client = new WsMulticast.MulticastClient("127.0.0.1", Port(server), new NetCoreServerPrograms.Totals());
            Assert.True(client.Connect());
            Assert.True(client.IsWebSocket);
            Assert.True(client.CloseAsync(100));
            Assert.False(client.CloseAsync(1000)); // one close frame per connection
            await Wait.UntilAsync(() => !client.IsConnected, "the client to disconnect");
            Assert.Equal(DisconnectReason.PeerClosed, client.DisconnectReason); // the server answered and closed: a handshake, not a failure
        }
        finally
        {
            Assert.False(WsMulticast.Program.Command(server, string.Empty));
            server.Dispose();
        }
    }

    [Fact]
    public async Task The_multicast_benchmarks_session_cap_holds_for_a_peer_that_reads_nothing()
    {
        using var server = new ReportingMulticastServer { OptionSendBufferSize = 8 * 1024 };
        Assert.True(server.Start());
        using var peer = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { ReceiveBufferSize = 4 * 1024 };
        await peer.ConnectAsync(server.Endpoint);
        var session = await server.Connected.Task.WaitAsync(Wait.Default);

        // 8 MiB: without the cap, twice what OptionSendBufferLimit lets a session queue.
        var message = new byte[64 * 1024];
        for (var i = 0; i < 128; i++)
            Assert.True(server.Multicast(message));

        Assert.True(session.Refused > 0, "The benchmark session's SendAsync override never refused: Multicast did not call it.");
        Assert.InRange(session.BytesPending, 1, TcpMulticast.MulticastSession.Limit);
        Assert.True(session.IsConnected, $"The session was disconnected ({session.DisconnectReason}).");
    }

    [Fact]
    public void The_multicast_benchmark_sessions_are_multicast_to_through_their_override()
    {
        Assert.Equal(MulticastRoute.ArrayOverride, new TcpMulticast.MulticastSession(new TcpServer(IPAddress.Loopback, 0)).MulticastRoute);
        Assert.Equal(MulticastRoute.ArrayOverride, new UdsMulticast.MulticastSession(new UdsServer("unused.sock")).MulticastRoute);
        Assert.Equal(MulticastRoute.ArrayOverride, new SslMulticast.MulticastSession(new SslServer(new SslContext(), IPAddress.Loopback, 0)).MulticastRoute);
        Assert.Equal(MulticastRoute.SharedCopy, new TcpEcho.EchoSession(new TcpServer(IPAddress.Loopback, 0)).MulticastRoute);
    }

    private static int Port(StreamServer<TcpSession> server) => ((IPEndPoint)server.Endpoint).Port;

    private static int Port(StreamServer<SslSession> server) => ((IPEndPoint)server.Endpoint).Port;

    private static void AssertWorked(NetCoreServerPrograms.Report report)
    {
        var text = string.Join(Environment.NewLine, report.Lines);
        Assert.True(report.Errors == 0, text);
        Assert.True(report.Bytes > 0, "No data went through:" + Environment.NewLine + text);
        Assert.Contains($"Total data: {Utilities.GenerateDataSize(report.Bytes)}", report.Lines);
    }

    private sealed class ReportingMulticastServer() : TcpMulticast.MulticastServer(IPAddress.Loopback, 0)
    {
        public TaskCompletionSource<TcpMulticast.MulticastSession> Connected { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        protected override void OnConnected(TcpSession session) => Connected.TrySetResult((TcpMulticast.MulticastSession)session);
    }
}
