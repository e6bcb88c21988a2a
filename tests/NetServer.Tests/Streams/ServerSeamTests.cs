using System;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Streams;

/// <summary>
/// The server's seams: multicast membership under the session's control, the session limit, and
/// a stop that no session set-up can outlive.
/// </summary>
public sealed class ServerSeamTests
{
    private static readonly TimeSpan s_timeout = TimeSpan.FromSeconds(30);

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task A_session_joins_the_multicast_when_it_chooses_and_can_leave_it(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        var created = 0;
        harness.Probe.ConfigureSession = probe => probe.AutoJoinMulticast = Interlocked.Increment(ref created) != 1;
        Assert.True(harness.Start());

        var lateProbe = new Probe();
        var late = harness.CreateClient(lateProbe);
        Assert.True(await late.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout));
        // Accepted connections are set up in parallel: the first session must exist before the
        // second client connects, or the second could be the one created first.
        await harness.Probe.WaitForSessionsAsync(1);
        var eagerProbe = new Probe();
        var eager = harness.CreateClient(eagerProbe);
        Assert.True(await eager.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout));
        await harness.Probe.WaitForSessionsAsync(2);
        var lateSession = harness.Probe.Sessions.Keys.Select(harness.FindSession).Single(s => s is { IsMulticastMember: false })!;
        var eagerSession = harness.Probe.Sessions.Keys.Select(harness.FindSession).Single(s => s is { IsMulticastMember: true })!;

        Assert.True(harness.Multicast(new byte[10]));
        await Wait.UntilAsync(() => eagerProbe.ReceivedBytes == 10, "the member to get the first multicast");

        Assert.True(lateSession.JoinMulticast());
        Assert.False(lateSession.JoinMulticast()); // a member already
        Assert.True(harness.Multicast(new byte[20]));
        await Wait.UntilAsync(() => eagerProbe.ReceivedBytes == 30 && lateProbe.ReceivedBytes == 20, "both to get the second multicast");

        Assert.True(lateSession.LeaveMulticast());
        Assert.False(lateSession.IsMulticastMember);
        Assert.True(harness.Multicast(new byte[40]));
        await Wait.UntilAsync(() => eagerProbe.ReceivedBytes == 70, "the member to get the third multicast");
        await Task.Delay(200);
        Assert.Equal(20, lateProbe.ReceivedBytes); // the first multicast never reached it, nor the third

        await late.DisconnectAsync(CancellationToken.None);
        await Wait.UntilAsync(() => !lateSession.IsConnected, "the late session to disconnect");
        Assert.False(lateSession.JoinMulticast()); // a session that disconnected cannot join
        Assert.True(eagerSession.IsMulticastMember);
        late.Dispose();
        eager.Dispose();
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Connections_past_the_session_limit_are_closed_at_once_counted_and_reported(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        harness.Server.OptionMaxSessions = 2;
        Assert.True(harness.Start());

        var probes = new[] { new Probe(), new Probe(), new Probe(), new Probe() };
        var clients = probes.Select(harness.CreateClient).ToArray();
        try
        {
            Assert.True(await clients[0].ConnectAsync(CancellationToken.None).WaitAsync(s_timeout));
            Assert.True(await clients[1].ConnectAsync(CancellationToken.None).WaitAsync(s_timeout));
            await harness.Probe.WaitForSessionsAsync(2);

            // The third is accepted by the kernel, then closed by the server before any session exists.
            try
            {
                await clients[2].ConnectAsync(CancellationToken.None).WaitAsync(s_timeout);
            }
            catch (Exception e) when (e is SocketException or System.Security.Authentication.AuthenticationException or System.IO.IOException)
            {
                // Over TLS the handshake fails on the closed connection.
            }

            await probes[2].DisconnectedSignal.Task.WaitAsync(s_timeout);
            Assert.Equal(1, harness.Server.RejectedSessions);
            Assert.Equal(2, harness.ConnectedSessions);
            Assert.Contains("error:" + SocketError.TooManyOpenSockets, harness.Probe.Events);

            // A place freed is a place taken.
            await clients[0].DisconnectAsync(CancellationToken.None);
            await Wait.UntilAsync(() => harness.ConnectedSessions == 1, "the first session to leave");
            Assert.True(await clients[3].ConnectAsync(CancellationToken.None).WaitAsync(s_timeout));
            await Wait.UntilAsync(() => harness.ConnectedSessions == 2, "the fourth session to arrive");
            Assert.Equal(1, harness.Server.RejectedSessions);
        }
        finally
        {
            foreach (var client in clients)
                client.Dispose();
        }
    }

    [Fact]
    public async Task No_session_starts_and_no_CreateSession_runs_after_Stop_returned()
    {
        // The set-up of an accepted connection runs on the thread pool; here it is held inside
        // ConfigureAcceptedSocket while Stop runs. Stop must wait for it (and the session it then
        // creates must end before Stop returns), instead of returning while a session is yet to start.
        using var gate = new ManualResetEventSlim();
        using var entered = new ManualResetEventSlim();
        var events = new System.Collections.Concurrent.ConcurrentQueue<string>();
        var server = new HeldSetUpServer(entered, gate, events);
        Assert.True(server.Start());
        using var peer = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await peer.ConnectAsync(server.Endpoint).WaitAsync(s_timeout);
        Assert.True(await HarnessExtensions.RunBlocking(() => entered.Wait(s_timeout)).WaitAsync(s_timeout));

        var stopping = HarnessExtensions.RunBlocking(() =>
        {
            var stopped = server.Stop();
            events.Enqueue("stop-returned");
            return stopped;
        });
        await Task.Delay(300); // Stop is now waiting (or, without the fix, has returned)
        gate.Set();
        Assert.True(await stopping.WaitAsync(s_timeout));
        await Task.Delay(300); // anything still to come after Stop returned would come now

        var order = events.ToArray();
        var stopAt = Array.IndexOf(order, "stop-returned");
        Assert.True(stopAt == order.Length - 1, $"Hooks ran after Stop returned: {string.Join(", ", order)}");
        if (order.Contains("disconnected"))
            Assert.True(Array.IndexOf(order, "connected") is >= 0 and var c && c < Array.IndexOf(order, "disconnected"), string.Join(", ", order));
        server.Dispose();
    }

    private sealed class HeldSetUpServer(ManualResetEventSlim entered, ManualResetEventSlim gate, System.Collections.Concurrent.ConcurrentQueue<string> events)
        : TcpServer(new IPEndPoint(IPAddress.Loopback, 0))
    {
        private protected override void ConfigureAcceptedSocket(Socket socket)
        {
            entered.Set();
            gate.Wait(TimeSpan.FromSeconds(30));
            base.ConfigureAcceptedSocket(socket);
        }

        protected override TcpSession CreateSession()
        {
            events.Enqueue("create-session");
            return new RecordingSession(this, events);
        }
    }

    private sealed class RecordingSession(TcpServer server, System.Collections.Concurrent.ConcurrentQueue<string> events) : TcpSession(server)
    {
        protected override void OnConnected() => events.Enqueue("connected");

        protected override void OnDisconnected() => events.Enqueue("disconnected");
    }
}

/// <summary>A client's connect racing its Disconnect.</summary>
public sealed class ClientConnectRaceTests
{
    private static readonly TimeSpan s_timeout = TimeSpan.FromSeconds(30);

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task A_Disconnect_while_a_connect_completes_abandons_it_instead_of_being_lost(bool asynchronous)
    {
        // The socket has connected and the client is setting it up (held here) when Disconnect
        // comes: Disconnect must see the attempt and end it, not return false and leave the
        // client connected a moment later.
        using var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        listener.Listen();
        using var entered = new ManualResetEventSlim();
        using var gate = new ManualResetEventSlim();
        using var client = new HeldConnectClient((IPEndPoint)listener.LocalEndPoint!, entered, gate);

        var connecting = asynchronous
            ? Task.Run(() => client.ConnectAsync(CancellationToken.None))
            : HarnessExtensions.RunBlocking(client.Connect);
        Assert.True(await HarnessExtensions.RunBlocking(() => entered.Wait(s_timeout)).WaitAsync(s_timeout));

        var disconnected = client.Disconnect();
        gate.Set();
        var connected = false;
        try
        {
            connected = await connecting.WaitAsync(s_timeout);
        }
        catch (SocketException)
        {
            // ConnectAsync(token) reports the abandoned attempt as a failure.
        }

        Assert.True(disconnected, "Disconnect did not see the connect in progress.");
        Assert.False(connected);
        Assert.False(client.IsConnected);
        Assert.Equal(DisconnectReason.ConnectFailed, client.DisconnectReason);
    }

    private sealed class HeldConnectClient(IPEndPoint endpoint, ManualResetEventSlim entered, ManualResetEventSlim gate) : TcpClient(endpoint)
    {
        private protected override void ConfigureSocket(Socket socket, bool connected)
        {
            base.ConfigureSocket(socket, connected);
            if (!connected)
                return;
            entered.Set();
            gate.Wait(TimeSpan.FromSeconds(30));
        }
    }
}
