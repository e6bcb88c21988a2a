using System.Net;
using System.Net.Sockets;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Udp;

/// <summary>
/// A server binds the same port again: after Stop (counters reset), through Restart, and from
/// inside its own OnStopped (as a client connects again from OnDisconnected). In
/// <see cref="PortRebindCollection"/>, so a child process forked by another test cannot hold the
/// closed socket's port meanwhile.
/// </summary>
[Collection(nameof(PortRebindCollection))]
public class UdpRestartTests
{
    [Theory]
    [MemberData(nameof(UdpModes.All), MemberType = typeof(UdpModes))]
    public async Task Restart_rebinds_the_same_port_resets_the_counters_and_serves_again(UdpIo io)
    {
        var pool = new LeakCheckingBufferPool();
        await using (var server = new ProbeUdpServer(UdpTest.RebindableLoopback(), pool) { Io = io })
        {
            server.Probe.Echo();
            Assert.True(server.Start());
            var port = server.Port;
            using var peer = new RawUdp(IPAddress.Loopback);
            peer.Send(server.Endpoint, "before");
            Assert.Equal("before", await peer.ReceiveTextAsync());
            await Wait.UntilAsync(() => server.DatagramsSent == 1, "the send counter");

            // Counters stay readable after Stop and start from zero at the next Start.
            Assert.True(server.Stop());
            Assert.Equal(1, server.DatagramsReceived);
            Assert.Equal(6, server.BytesSent);
            server.Probe.Rearm();
            Assert.True(server.Start());
            Assert.Equal(port, server.Port);
            Assert.Equal(0, server.DatagramsReceived);
            Assert.Equal(0, server.DatagramsSent);
            Assert.Equal(0, server.BytesReceived);
            Assert.Equal(0, server.BytesSent);

            server.Probe.Rearm();
            Assert.True(server.Restart());
            Assert.Equal(port, server.Port);
            Assert.True(server.IsStarted);
            peer.Send(server.Endpoint, "after");
            Assert.Equal("after", await peer.ReceiveTextAsync());
            await Wait.UntilAsync(() => server.DatagramsSent == 1, "the send counter");
            Assert.Equal(1, server.DatagramsReceived);
            Assert.Equal(5, server.BytesReceived);
            Assert.Equal(
                new[] { "starting", "started", "stopping", "stopped", "starting", "started", "stopping", "stopped", "starting", "started" },
                server.Probe.Events);
        }

        await pool.AssertAllReturnedAsync();
    }


    [Theory]
    [MemberData(nameof(UdpModes.All), MemberType = typeof(UdpModes))]
    public async Task Connect_from_OnDisconnected_and_Start_from_OnStopped_work(UdpIo io)
    {
        var pool = new LeakCheckingBufferPool();
        await using (var server = new ProbeUdpServer(UdpTest.Loopback(AddressFamily.InterNetwork), pool) { Io = io })
        {
            server.Probe.Echo();
            var restarts = 0;
            bool? restarted = null;
            server.Probe.Stopped = peer =>
            {
                if (restarts++ == 0)
                    restarted = ((UdpServer)peer).Start();
            };
            Assert.True(server.Start());
            var port = server.Port;
            Assert.True(server.Stop());
            Assert.True(restarted);
            Assert.True(server.IsStarted);
            Assert.Equal(port, server.Port);

            await using var client = new ProbeUdpClient(server.IPEndpoint, pool) { Io = io };
            client.Probe.KeepReceiving();
            var reconnects = 0;
            bool? reconnected = null;
            client.Probe.Stopped = peer =>
            {
                if (reconnects++ == 0)
                    reconnected = ((UdpClient)peer).Connect();
            };
            Assert.True(client.Connect());
            Assert.True(client.Disconnect());
            Assert.True(reconnected);
            Assert.True(client.IsConnected);
            Assert.Equal(4, client.Send("back"));
            await Wait.UntilAsync(() => client.Probe.ReceivedCount == 1, "the echo after connecting from OnDisconnected");
            Assert.Equal(
                new[] { "connecting", "connected", "disconnecting", "disconnected", "connecting", "connected" },
                client.Probe.Events);
            Assert.Equal(
                new[] { "starting", "started", "stopping", "stopped", "starting", "started" },
                server.Probe.Events);
        }

        await pool.AssertAllReturnedAsync();
    }
}
