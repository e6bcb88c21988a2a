using System;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Udp;

/// <summary>
/// Bad input and unreachable peers: argument errors throw; a datagram that cannot be sent is
/// reported on OnError with the specific error, the send says false (or 0), nothing is counted as
/// sent, and the server goes on echoing; an incoming datagram larger than OptionMaxDatagramSize is
/// reported as MessageSize and not delivered; a connected client hears ICMP port-unreachable as
/// ConnectionRefused and keeps working. The tests that send or receive run in both I/O modes; the
/// argument checks, which no socket call reaches, in the default one.
/// </summary>
public class UdpErrorTests
{
    /// <summary>Datagrams no system can send.</summary>
    public enum BadSend
    {
        /// <summary>To port 0 (EINVAL).</summary>
        PortZero,

        /// <summary>An IPv6 endpoint from an IPv4 socket.</summary>
        IPv6TargetFromIPv4,

        /// <summary>An IPv4 endpoint from an IPv6 socket that is not dual-mode.</summary>
        IPv4TargetFromIPv6,

        /// <summary>To the loopback network's broadcast address without OptionBroadcast (EACCES).</summary>
        BroadcastWithoutOption,

        /// <summary>One byte more than any UDP datagram carries (refused before the socket).</summary>
        LargerThanUdp,

        /// <summary>One byte more than an IPv4 datagram carries (refused by the kernel).</summary>
        LargerThanIPv4,
    }

    /// <summary>For calls whose argument errors must throw at the call, before any task exists.</summary>
    private static void CallOnly(ValueTask<bool> task) => Assert.Fail($"The call returned a task ({task.IsCompleted}) instead of throwing.");

    public static TheoryData<UdpIo, BadSend, SocketError> BadSends => UdpModes.Each(
        (BadSend.PortZero, SocketError.InvalidArgument),
        (BadSend.IPv6TargetFromIPv4, SocketError.AddressFamilyNotSupported),
        (BadSend.IPv4TargetFromIPv6, SocketError.AddressFamilyNotSupported),
        (BadSend.BroadcastWithoutOption, SocketError.AccessDenied),
        (BadSend.LargerThanUdp, SocketError.MessageSize),
        (BadSend.LargerThanIPv4, SocketError.MessageSize));

    public static TheoryData<UdpIo, bool> EachFlag => UdpModes.Each(false, true);

    [Theory]
    [MemberData(nameof(BadSends))]
    public async Task An_unsendable_datagram_is_reported_on_OnError_and_the_server_keeps_echoing(UdpIo io, BadSend bad, SocketError expected)
    {
        var pool = new LeakCheckingBufferPool();
        var family = bad == BadSend.IPv4TargetFromIPv6 ? AddressFamily.InterNetworkV6 : AddressFamily.InterNetwork;
        await using (var server = new ProbeUdpServer(UdpTest.Loopback(family), pool) { Io = io })
        {
            server.Probe.Echo();
            Assert.True(server.Start());
            var (target, size) = bad switch
            {
                BadSend.PortZero => (new IPEndPoint(IPAddress.Loopback, 0), 10),
                BadSend.IPv6TargetFromIPv4 => (new IPEndPoint(IPAddress.IPv6Loopback, server.Port), 10),
                BadSend.IPv4TargetFromIPv6 => (new IPEndPoint(IPAddress.Loopback, server.Port), 10),
                BadSend.BroadcastWithoutOption => (new IPEndPoint(IPAddress.Parse("127.255.255.255"), server.Port), 10),
                BadSend.LargerThanUdp => (new IPEndPoint(IPAddress.Loopback, server.Port), UdpPeer.MaxDatagramPayload + 1),
                _ => (new IPEndPoint(IPAddress.Loopback, server.Port), UdpTest.MaxIPv4Payload + 1),
            };
            var datagram = UdpTest.Datagram(1, size);

            Assert.False(server.SendAsync(target, datagram));
            Assert.Equal(expected, Assert.Single(server.Probe.Errors));
            Assert.Equal(0, server.Send(target, datagram));
            Assert.False(await server.SendAsync(target, datagram.AsMemory()).AsTask().WaitAsync(Wait.Default));
            Assert.Equal(new[] { expected, expected, expected }, server.Probe.Errors);
            Assert.Equal(0, server.DatagramsSent);
            Assert.Equal(0, server.BytesSent);
            Assert.Equal(0, server.BytesPending);
            Assert.Empty(server.Probe.SentSizes);

            // The server goes on serving everyone else.
            using var peer = new RawUdp(UdpTest.Loopback(family).Address);
            peer.Send(server.Endpoint, "still here");
            Assert.Equal("still here", await peer.ReceiveTextAsync("the echo after the errors"));
            Assert.True(server.IsStarted);
            Assert.Equal(3, server.Probe.Errors.Count);
        }

        await pool.AssertAllReturnedAsync();
    }

    [Fact]
    public async Task Null_endpoints_and_buffers_throw_ArgumentNullException()
    {
        var pool = new LeakCheckingBufferPool();
        await using (var server = new ProbeUdpServer(UdpTest.Loopback(AddressFamily.InterNetwork), pool))
        {
            Assert.True(server.Start());
            var data = new byte[] { 1, 2, 3 };
            Assert.Throws<ArgumentNullException>(() => server.SendAsync(null!, data));
            Assert.Throws<ArgumentNullException>(() => server.SendAsync(null!, data, 0, 3));
            Assert.Throws<ArgumentNullException>(() => server.SendAsync(null!, data.AsSpan()));
            Assert.Throws<ArgumentNullException>(() => server.SendAsync(null!, "text"));
            Assert.Throws<ArgumentNullException>(() => CallOnly(server.SendAsync(null!, data.AsMemory())));
            Assert.Throws<ArgumentNullException>(() => server.Send(null!, data));
            Assert.Throws<ArgumentNullException>(() => server.Send(null!, data, 0, 3));
            Assert.Throws<ArgumentNullException>(() => server.Send(null!, "text"));
            Assert.Throws<ArgumentNullException>(() => server.SendAsync(server.Endpoint, (byte[])null!));
            Assert.Throws<ArgumentNullException>(() => server.Send(server.Endpoint, (string)null!));
            Assert.Throws<ArgumentNullException>(() => new UdpServer((IPEndPoint)null!));
            Assert.Throws<ArgumentNullException>(() => new UdpClient((IPEndPoint)null!));
            Assert.Throws<ArgumentOutOfRangeException>(() => server.SendAsync(server.Endpoint, data, 2, 2));
            Assert.Empty(server.Probe.Errors);
            Assert.Equal(0, server.DatagramsSent);
        }

        await pool.AssertAllReturnedAsync();
    }

    [Fact]
    public async Task A_DnsEndPoint_target_throws_ArgumentException()
    {
        var pool = new LeakCheckingBufferPool();
        await using (var server = new ProbeUdpServer(UdpTest.Loopback(AddressFamily.InterNetwork), pool))
        {
            Assert.True(server.Start());
            var target = new DnsEndPoint("localhost", server.Port);
            Assert.Throws<ArgumentException>(() => server.SendAsync(target, new byte[] { 1 }));
            Assert.Throws<ArgumentException>(() => server.Send(target, new byte[] { 1 }));
            Assert.Throws<ArgumentException>(() => CallOnly(server.SendAsync(target, new byte[] { 1 }.AsMemory())));
            Assert.Empty(server.Probe.Errors);
        }

        await pool.AssertAllReturnedAsync();
    }

    [Theory]
    [MemberData(nameof(UdpModes.All), MemberType = typeof(UdpModes))]
    public async Task Broadcast_with_OptionBroadcast_reaches_a_listener_on_the_loopback_broadcast_address(UdpIo io)
    {
        var pool = new LeakCheckingBufferPool();
        using var listener = new RawUdp(IPAddress.Parse("127.255.255.255"));
        await using (var server = new ProbeUdpServer(UdpTest.Loopback(AddressFamily.InterNetwork), pool) { Io = io, OptionBroadcast = true })
        {
            Assert.True(server.Start());
            Assert.True(server.SendAsync(listener.Endpoint, "to all"));
            var (data, from) = await listener.ReceiveAsync("the broadcast");
            Assert.Equal("to all", System.Text.Encoding.UTF8.GetString(data));
            Assert.Equal(server.Endpoint, from);
            server.Probe.AssertNoErrors();
        }

        await pool.AssertAllReturnedAsync();
    }

    [Theory]
    [MemberData(nameof(EachFlag))]
    public async Task A_datagram_larger_than_OptionMaxDatagramSize_is_reported_and_not_delivered(UdpIo io, bool autoReceive)
    {
        const int max = 100;
        var pool = new LeakCheckingBufferPool();
        await using (var server = new ProbeUdpServer(UdpTest.Loopback(AddressFamily.InterNetwork), pool) { Io = io, OptionMaxDatagramSize = max, OptionAutoReceive = autoReceive })
        {
            // Without OptionAutoReceive the server asks for exactly one datagram: a refused one
            // must not use up that wish.
            if (!autoReceive)
                server.Probe.Started = peer => peer.ReceiveAsync();
            Assert.True(server.Start());
            using var peer = new RawUdp(IPAddress.Loopback);

            peer.Send(server.Endpoint, UdpTest.Datagram(1, max + 1));
            peer.Send(server.Endpoint, UdpTest.Datagram(2, UdpTest.MaxIPv4Payload));
            peer.Send(server.Endpoint, UdpTest.Datagram(3, max));
            await Wait.UntilAsync(() => server.Probe.ReceivedCount == 1, "the datagram that fits");
            Assert.Equal(new[] { SocketError.MessageSize, SocketError.MessageSize }, server.Probe.Errors);
            Assert.Equal(3, UdpTest.IdOf(server.Probe.Received.Single().Data, max));
            Assert.Equal(1, server.DatagramsReceived);
            Assert.Equal(max, server.BytesReceived);

            peer.Send(server.Endpoint, UdpTest.Datagram(4, 4));
            if (autoReceive)
            {
                await Wait.UntilAsync(() => server.Probe.ReceivedCount == 2, "the next datagram");
                Assert.Equal(4, UdpTest.IdOf(server.Probe.Received.Last().Data, 4));
            }
            else
            {
                // Nobody asked again: the datagram waits in the kernel until someone does.
                await Wait.UntilAsync(() => server.Socket!.Available > 0, "the next datagram to reach the socket");
                Assert.Equal(1, server.Probe.ReceivedCount);
                server.ReceiveAsync();
                await Wait.UntilAsync(() => server.Probe.ReceivedCount == 2, "the next datagram");
            }

            Assert.Equal(2, server.Probe.Errors.Count);
        }

        await pool.AssertAllReturnedAsync();
    }

    [Theory]
    [MemberData(nameof(EachFlag))]
    public async Task A_connected_client_hears_a_closed_port_as_ConnectionRefused_and_keeps_working(UdpIo io, bool receiving)
    {
        var pool = new LeakCheckingBufferPool();

        // 127.0.0.1:port stays bound by us, so nothing else can take port on every address;
        // 127.0.0.2:port has no socket, so the kernel answers with ICMP port unreachable.
        using var holder = new RawUdp(IPAddress.Loopback);
        var closed = new IPEndPoint(IPAddress.Parse("127.0.0.2"), holder.Endpoint.Port);
        await using (var client = new ProbeUdpClient(closed, pool) { Io = io })
        {
            if (receiving)
                client.Probe.KeepReceiving();
            Assert.True(client.Connect());
            Assert.True(client.SendAsync("anyone?"));

            if (receiving)
            {
                // The pending receive takes the error.
                await Wait.UntilAsync(() => client.Probe.ErrorCount(SocketError.ConnectionRefused) == 1, "OnError(ConnectionRefused)");
            }
            else
            {
                // The next send takes the error the kernel keeps on the socket.
                await Wait.UntilAsync(() => client.Socket!.Poll(0, SelectMode.SelectError), "the ICMP error to reach the socket");
                Assert.False(client.SendAsync("anyone at all?"));
                Assert.Equal(SocketError.ConnectionRefused, Assert.Single(client.Probe.Errors));
            }

            Assert.True(client.IsConnected);
            Assert.Equal(1, client.DatagramsSent);

            // Someone starts listening there: the same client talks to it.
            using var server = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
            server.Bind(closed);
            Assert.True(client.SendAsync("now?"));
            var buffer = new byte[100];
            EndPoint from = new IPEndPoint(IPAddress.Loopback, 0);
            var received = await Task.Run(() =>
            {
                server.ReceiveTimeout = (int)Wait.Default.TotalMilliseconds;
                return server.ReceiveFrom(buffer, ref from);
            }).WaitAsync(Wait.Default);
            Assert.Equal("now?", System.Text.Encoding.UTF8.GetString(buffer, 0, received));
            Assert.Equal(client.LocalEndpoint, from);

            if (!receiving)
                client.ReceiveAsync();
            server.SendTo("yes"u8, SocketFlags.None, from);
            await Wait.UntilAsync(() => client.Probe.ReceivedCount == 1, "the reply");
            Assert.Equal("yes", client.Probe.Texts().Single());
            Assert.Single(client.Probe.Errors);
        }

        await pool.AssertAllReturnedAsync();
    }

    [Theory]
    [MemberData(nameof(UdpModes.All), MemberType = typeof(UdpModes))]
    public async Task A_server_sending_to_a_closed_port_hears_nothing_and_keeps_working(UdpIo io)
    {
        // Linux reports ICMP port unreachable only to connected sockets; a server's is not.
        var pool = new LeakCheckingBufferPool();
        using var holder = new RawUdp(IPAddress.Loopback);
        var closed = new IPEndPoint(IPAddress.Parse("127.0.0.2"), holder.Endpoint.Port);
        await using (var server = new ProbeUdpServer(UdpTest.Loopback(AddressFamily.InterNetwork), pool) { Io = io })
        {
            server.Probe.Echo();
            Assert.True(server.Start());
            for (var i = 0; i < 3; i++)
                Assert.True(server.SendAsync(closed, "anyone?"));
            using var peer = new RawUdp(IPAddress.Loopback);
            peer.Send(server.Endpoint, "echo");
            Assert.Equal("echo", await peer.ReceiveTextAsync());
            await Wait.UntilAsync(() => server.DatagramsSent == 4, "the send counter");
            server.Probe.AssertNoErrors();
        }

        await pool.AssertAllReturnedAsync();
    }

    [Theory]
    [MemberData(nameof(UdpModes.All), MemberType = typeof(UdpModes))]
    public async Task An_IPv4_mapped_IPv6_endpoint_reaches_an_IPv4_peer(UdpIo io)
    {
        // A dual-mode peer elsewhere names IPv4 senders ::ffff:a.b.c.d; an IPv4 socket given such
        // an endpoint sends to a.b.c.d. The net target maps it back (DatagramTransport.net.cs,
        // MatchFamily); the netstandard target refuses it with AddressFamilyNotSupported
        // (DatagramTransport.netstandard.cs, IsReachable): the same call behaves differently per target.
        var pool = new LeakCheckingBufferPool();
        using var peer = new RawUdp(IPAddress.Loopback);
        await using (var server = new ProbeUdpServer(UdpTest.Loopback(AddressFamily.InterNetwork), pool) { Io = io })
        {
            Assert.True(server.Start());
            var mapped = new IPEndPoint(IPAddress.Loopback.MapToIPv6(), peer.Endpoint.Port);
            Assert.True(server.SendAsync(mapped, "mapped"));
            Assert.Equal("mapped", await peer.ReceiveTextAsync("the datagram to the mapped endpoint"));
            server.Probe.AssertNoErrors();
        }

        await pool.AssertAllReturnedAsync();
    }

    [Fact]
    public async Task Calls_before_Start_or_Connect_do_nothing_and_say_so()
    {
        var pool = new LeakCheckingBufferPool();
        var target = new IPEndPoint(IPAddress.Loopback, 9);
        await using var server = new ProbeUdpServer(UdpTest.Loopback(AddressFamily.InterNetwork), pool);
        await using var client = new ProbeUdpClient(target, pool);

        Assert.False(server.SendAsync(target, "x"));
        Assert.Equal(0, server.Send(target, "x"));
        Assert.False(await server.SendAsync(target, new byte[] { 1 }.AsMemory()));
        Assert.False(client.SendAsync("x"));
        Assert.Equal(0, client.Send("x"));
        Assert.False(await client.SendAsync(new byte[] { 1 }.AsMemory()));
        server.ReceiveAsync();
        client.ReceiveAsync();
        EndPoint from = target;
        Assert.Equal(0, server.Receive(ref from, new byte[10]));
        Assert.False(server.Stop());
        Assert.False(await server.StopAsync());
        Assert.False(client.Disconnect());
        Assert.False(client.Reconnect());
        Assert.Throws<InvalidOperationException>(() => server.Multicast("x"));
        Assert.Throws<InvalidOperationException>(() => client.JoinMulticastGroup(IPAddress.Parse("239.255.0.1")));
        Assert.Null(server.Socket);
        Assert.True(server.IsSocketDisposed);
        Assert.Equal(0, server.BytesPending);
        Assert.Empty(server.Probe.Events);
        Assert.Empty(client.Probe.Events);
        server.Probe.AssertNoErrors();
        client.Probe.AssertNoErrors();
    }

    [Fact]
    public async Task A_server_started_without_a_multicast_endpoint_cannot_Multicast()
    {
        var pool = new LeakCheckingBufferPool();
        await using (var server = new ProbeUdpServer(UdpTest.Loopback(AddressFamily.InterNetwork), pool))
        {
            Assert.True(server.Start());
            Assert.Null(server.MulticastEndpoint);
            Assert.Throws<InvalidOperationException>(() => server.Multicast("x"));
            Assert.Throws<InvalidOperationException>(() => server.MulticastAsync("x"));
            Assert.Throws<InvalidOperationException>(() => CallOnly(server.MulticastAsync(new byte[] { 1 }.AsMemory())));
            Assert.Equal(0, server.DatagramsSent);
        }

        await pool.AssertAllReturnedAsync();
    }

    [Fact]
    public void Options_refuse_values_out_of_range()
    {
        using var server = new UdpServer(IPAddress.Loopback, 0);
        Assert.Throws<ArgumentOutOfRangeException>(() => server.OptionMaxDatagramSize = 0);
        Assert.Throws<ArgumentOutOfRangeException>(() => server.OptionMaxDatagramSize = UdpPeer.MaxDatagramPayload + 1);
        Assert.Throws<ArgumentOutOfRangeException>(() => server.OptionMulticastTimeToLive = -1);
        Assert.Throws<ArgumentOutOfRangeException>(() => server.OptionMulticastTimeToLive = 256);
        Assert.Throws<ArgumentOutOfRangeException>(() => server.OptionReceiveBufferSize = 0);
        Assert.Throws<ArgumentOutOfRangeException>(() => server.OptionSendBufferLimit = -1);
        Assert.Throws<ArgumentOutOfRangeException>(() => server.OptionMulticastInterface = -1);
        Assert.Equal(UdpPeer.MaxDatagramPayload, server.OptionMaxDatagramSize);
        server.OptionReceiveBufferLimit = 1000;
        Assert.Equal(1000, server.OptionMaxDatagramSize);
        server.OptionReceiveBufferLimit = 0;
        Assert.Equal(UdpPeer.MaxDatagramPayload, server.OptionMaxDatagramSize);
        server.OptionMulticastTimeToLive = 0;
        Assert.Equal(0, server.OptionMulticastTimeToLive);
    }

    [Fact]
    public async Task Binding_an_endpoint_in_use_fails_clearly_and_leaves_the_peer_stopped()
    {
        var pool = new LeakCheckingBufferPool();
        using var holder = new RawUdp(IPAddress.Loopback);
        await using (var server = new ProbeUdpServer(holder.Endpoint, pool))
        await using (var client = new ProbeUdpClient(holder.Endpoint, pool) { OptionMulticast = true })
        {
            var error = Assert.Throws<SocketException>(() => server.Start());
            Assert.Equal(SocketError.AddressAlreadyInUse, error.SocketErrorCode);
            Assert.False(server.IsStarted);

            // A client reports its socket errors on OnError and Connect says false.
            Assert.False(client.Connect());
            Assert.Equal(SocketError.AddressAlreadyInUse, Assert.Single(client.Probe.Errors));
            Assert.False(client.IsConnected);
            Assert.DoesNotContain("connected", client.Probe.Events);

            holder.Dispose();
            Assert.True(server.Start());
            Assert.Equal(holder.Endpoint.Port, server.Port);
            Assert.True(server.Stop());
        }

        await pool.AssertAllReturnedAsync();
    }
}
