using System;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Udp;

/// <summary>Socket options, client counters, calls made from inside hooks, reconnects and the blocking Send and Receive.</summary>
public partial class UdpLifecycleTests
{
    [Fact]
    public async Task Address_options_apply_to_the_socket()
    {
        var pool = new LeakCheckingBufferPool();
        await using (var exclusive = new ProbeUdpServer(UdpTest.Loopback(AddressFamily.InterNetwork), pool) { OptionExclusiveAddressUse = true })
        await using (var shared = new ProbeUdpServer(UdpTest.Loopback(AddressFamily.InterNetwork), pool) { OptionReuseAddress = true, OptionReceiveBufferSize = 100_000, OptionSendBufferSize = 50_000 })
        {
            Assert.True(exclusive.Start());
            Assert.True(shared.Start());
            Assert.Equal(1, (int)shared.Socket!.GetSocketOption(SocketOptionLevel.Socket, SocketOptionName.ReuseAddress)!);
            Assert.Equal(0, (int)exclusive.Socket!.GetSocketOption(SocketOptionLevel.Socket, SocketOptionName.ReuseAddress)!);

            // Linux reports twice what was asked for (the kernel's bookkeeping share).
            Assert.Equal(200_000, shared.Socket.ReceiveBufferSize);
            Assert.Equal(100_000, shared.Socket.SendBufferSize);

            // A second socket with SO_REUSEADDR may share the shared port, not the exclusive one
            // (on Linux a port is exclusive unless every socket on it asks to share; the option
            // is Windows' SO_EXCLUSIVEADDRUSE, and here it must at least not break Start).
            using var second = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
            second.SetSocketOption(SocketOptionLevel.Socket, SocketOptionName.ReuseAddress, true);
            second.Bind(shared.Endpoint);
            using var third = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
            third.SetSocketOption(SocketOptionLevel.Socket, SocketOptionName.ReuseAddress, true);
            Assert.Equal(SocketError.AddressAlreadyInUse, Assert.Throws<SocketException>(() => third.Bind(exclusive.Endpoint)).SocketErrorCode);
        }

        await pool.AssertAllReturnedAsync();
    }

    [Theory]
    [MemberData(nameof(UdpModes.All), MemberType = typeof(UdpModes))]
    public async Task Client_counters_are_exact_and_reset_at_Connect(UdpIo io)
    {
        var pool = new LeakCheckingBufferPool();
        using var server = new RawUdp(IPAddress.Loopback);
        await using (var client = new ProbeUdpClient(server.Endpoint, pool) { Io = io, OptionAutoReceive = true })
        {
            var sizes = new[] { 0, 1, 7, 100, 1000, 8192, 20000 };
            for (var round = 0; round < 2; round++)
            {
                Assert.True(client.Connect());
                Assert.Equal(0, client.DatagramsSent + client.DatagramsReceived + client.BytesSent + client.BytesReceived);
                foreach (var size in sizes)
                    Assert.Equal(size, client.Send(new byte[size]));
                Assert.Equal(sizes.Length, client.DatagramsSent);
                Assert.Equal(sizes.Sum(), client.BytesSent);
                Assert.Equal(sizes, client.Probe.SentSizes.Skip(round * sizes.Length).Select(s => (int)s));

                var from = (await server.ReceiveAsync("the client's first datagram")).From;
                await server.ReceiveManyAsync(sizes.Length - 1);
                foreach (var size in sizes.Take(4))
                    server.Send(from, new byte[size]);
                await Wait.UntilAsync(() => client.DatagramsReceived == 4, "the server's datagrams");
                Assert.Equal(sizes.Take(4).Sum(), client.BytesReceived);
                Assert.Equal(0, client.BytesPending);
                Assert.True(client.Disconnect());
                client.Probe.Rearm();
            }

            client.Probe.AssertNoErrors();
        }

        await pool.AssertAllReturnedAsync();
    }

    [Theory]
    [MemberData(nameof(UdpModes.All), MemberType = typeof(UdpModes))]
    public async Task Stop_from_inside_OnReceived_does_not_deadlock(UdpIo io)
    {
        var pool = new LeakCheckingBufferPool();
        var results = new System.Collections.Concurrent.ConcurrentQueue<bool>();
        await using (var server = new ProbeUdpServer(UdpTest.Loopback(AddressFamily.InterNetwork), pool) { Io = io, OptionAutoReceive = true })
        {
            server.Probe.OnReceive = (peer, _, _, _, _) => results.Enqueue(((UdpServer)peer).Stop());
            Assert.True(server.Start());
            using var peer = new RawUdp(IPAddress.Loopback);
            for (var i = 0; i < 20; i++)
                peer.Send(server.Endpoint, "stop");

            await server.Probe.Finished.Task.WaitAsync(Wait.Default);
            Assert.False(server.IsStarted);
            Assert.True(results.First());
            Assert.All(results.Skip(1), Assert.False);
            Assert.Equal(new[] { "starting", "started", "stopping", "stopped" }, server.Probe.Events);
            Assert.Null(server.Probe.LateHook);
        }

        await pool.AssertAllReturnedAsync();
    }

    [Theory]
    [MemberData(nameof(UdpModes.All), MemberType = typeof(UdpModes))]
    public async Task Disconnect_and_Reconnect_from_inside_hooks_do_not_deadlock(UdpIo io)
    {
        var pool = new LeakCheckingBufferPool();
        using var server = new RawUdp(IPAddress.Loopback);
        await using (var client = new ProbeUdpClient(server.Endpoint, pool) { Io = io, OptionAutoReceive = true })
        {
            // Reconnect inside a hook cannot wait for the disconnect: it says false, and the client ends disconnected.
            bool? reconnected = null;
            client.Probe.OnReceive = (peer, _, _, _, _) => reconnected ??= ((UdpClient)peer).Reconnect();
            Assert.True(client.Connect());
            server.Send(client.LocalEndpoint, "go");
            await client.Probe.Finished.Task.WaitAsync(Wait.Default);
            Assert.False(reconnected);
            Assert.False(client.IsConnected);

            // Disconnect inside a hook: true at once, OnDisconnected after the hook returns.
            client.Probe.Rearm();
            bool? disconnected = null;
            client.Probe.OnReceive = (peer, _, _, _, _) => disconnected ??= ((UdpClient)peer).Disconnect();
            Assert.True(client.Connect());
            server.Send(client.LocalEndpoint, "go");
            await client.Probe.Finished.Task.WaitAsync(Wait.Default);
            Assert.True(disconnected);
            Assert.False(client.IsConnected);
            Assert.Equal(
                new[] { "connecting", "connected", "disconnecting", "disconnected", "connecting", "connected", "disconnecting", "disconnected" },
                client.Probe.Events);
            Assert.Null(client.Probe.LateHook);
        }

        await pool.AssertAllReturnedAsync();
    }

    [Theory]
    [MemberData(nameof(UdpModes.All), MemberType = typeof(UdpModes))]
    public async Task Connect_Disconnect_and_Reconnect_open_a_fresh_socket_each_time(UdpIo io)
    {
        var pool = new LeakCheckingBufferPool();
        await using (var server = new ProbeUdpServer(UdpTest.Loopback(AddressFamily.InterNetwork), pool) { Io = io })
        {
            server.Probe.Echo();
            Assert.True(server.Start());
            await using var real = new ProbeUdpClient(server.IPEndpoint, pool) { Io = io };
            real.Probe.KeepReceiving();

            Assert.True(real.Connect());
            var first = real.Socket;
            Assert.Equal(5, real.Send("one!!"));
            await Wait.UntilAsync(() => real.Probe.ReceivedCount == 1, "the first echo");

            real.Probe.Rearm();
            Assert.True(real.Reconnect());
            Assert.True(real.IsConnected);
            Assert.NotSame(first, real.Socket);
            Assert.Equal(3, real.Send("two"));
            await Wait.UntilAsync(() => real.Probe.ReceivedCount == 2, "the echo after Reconnect");
            Assert.Equal(new[] { "one!!", "two" }, real.Probe.Texts());

            Assert.True(real.Disconnect());
            Assert.False(real.Reconnect());
            Assert.False(real.IsConnected);
            Assert.Equal(
                new[] { "connecting", "connected", "disconnecting", "disconnected", "connecting", "connected", "disconnecting", "disconnected" },
                real.Probe.Events);
            real.Probe.AssertNoErrors();
        }

        await pool.AssertAllReturnedAsync();
    }

    [Theory]
    [MemberData(nameof(UdpModes.All), MemberType = typeof(UdpModes))]
    public async Task The_blocking_Send_and_Receive_work_with_Socket_ReceiveTimeout(UdpIo io)
    {
        var pool = new LeakCheckingBufferPool();
        using var server = new RawUdp(IPAddress.Loopback);
        await using (var client = new ProbeUdpClient(server.Endpoint, pool) { Io = io })
        {
            var hookThread = -1;
            client.Probe.OnReceive = (_, _, _, _, _) => hookThread = Environment.CurrentManagedThreadId;
            Assert.True(client.Connect());
            client.Socket!.ReceiveTimeout = 200;

            // Nothing to receive: 0 after the timeout, and a timeout is not an error.
            var (nothing, _, _) = await ReceiveOnAThreadAsync(client, new byte[10], 0, 10);
            Assert.Equal(0, nothing);
            Assert.Empty(client.Probe.Errors);

            Assert.Equal(4, client.Send("ping"));
            var (ping, from) = await server.ReceiveAsync("ping");
            Assert.Equal("ping", System.Text.Encoding.UTF8.GetString(ping));
            Assert.Equal(client.LocalEndpoint, from);

            server.Send(from, "pong");
            var buffer = new byte[20];
            var (size, source, thread) = await ReceiveOnAThreadAsync(client, buffer, 3, 17);
            Assert.Equal(4, size);
            Assert.Equal("pong", System.Text.Encoding.UTF8.GetString(buffer, 3, 4));
            Assert.Equal(server.Endpoint, source);

            // OnReceived ran on the caller's thread, with the same bytes.
            var (hookFrom, hookData) = Assert.Single(client.Probe.Received);
            Assert.Equal("pong", System.Text.Encoding.UTF8.GetString(hookData));
            Assert.Equal(server.Endpoint, hookFrom);
            Assert.Equal(thread, hookThread);
            Assert.Equal(1, client.DatagramsReceived);
            Assert.Equal(4, client.BytesReceived);

            server.Send(from, "text datagram");
            var text = await HarnessExtensions.RunBlocking(() =>
            {
                EndPoint any = new IPEndPoint(IPAddress.Loopback, 0);
                return client.Receive(ref any, 100);
            }).WaitAsync(Wait.Default);
            Assert.Equal("text datagram", text);

            // A datagram longer than the caller's buffer is cut to it, as the socket does.
            server.Send(from, "0123456789abcdef");
            var (cut, _, _) = await ReceiveOnAThreadAsync(client, buffer, 0, 10);
            Assert.Equal(10, cut);
            Assert.Equal("0123456789", System.Text.Encoding.UTF8.GetString(buffer, 0, 10));
        }

        await pool.AssertAllReturnedAsync();
    }

    private static Task<(long Size, EndPoint Source, int Thread)> ReceiveOnAThreadAsync(UdpPeer peer, byte[] buffer, int offset, int size) =>
        HarnessExtensions.RunBlocking(() =>
        {
            EndPoint source = new IPEndPoint(IPAddress.Loopback, 0);
            var received = peer.Receive(ref source, buffer, offset, size);
            return (received, source, Environment.CurrentManagedThreadId);
        }).WaitAsync(Wait.Default);

    [Theory]
    [MemberData(nameof(UdpModes.All), MemberType = typeof(UdpModes))]
    public async Task The_server_blocking_Receive_names_the_sender_and_raises_OnReceived_on_the_caller(UdpIo io)
    {
        var pool = new LeakCheckingBufferPool();
        await using (var server = new ProbeUdpServer(UdpTest.Loopback(AddressFamily.InterNetwork), pool) { Io = io })
        {
            var hookThread = -1;
            server.Probe.OnReceive = (_, _, _, _, _) => hookThread = Environment.CurrentManagedThreadId;
            Assert.True(server.Start());
            server.Socket!.ReceiveTimeout = (int)Wait.Default.TotalMilliseconds;
            using var peer = new RawUdp(IPAddress.Loopback);
            peer.Send(server.Endpoint, "hello");
            var buffer = new byte[100];
            var (size, source, thread) = await ReceiveOnAThreadAsync(server, buffer, 0, buffer.Length);
            Assert.Equal(5, size);
            Assert.Equal(peer.Endpoint, source);
            Assert.Equal(thread, hookThread);
            Assert.Equal(1, server.DatagramsReceived);

            // And back with the blocking Send.
            Assert.Equal(5, server.Send(source, buffer, 0, 5));
            Assert.Equal("hello", await peer.ReceiveTextAsync());
        }

        await pool.AssertAllReturnedAsync();
    }

    [Theory]
    [MemberData(nameof(UdpModes.All), MemberType = typeof(UdpModes))]
    public async Task Receive_throws_InvalidOperationException_while_asynchronous_receiving_is_active(UdpIo io)
    {
        var pool = new LeakCheckingBufferPool();
        await using (var server = new ProbeUdpServer(UdpTest.Loopback(AddressFamily.InterNetwork), pool) { Io = io, OptionAutoReceive = true })
        await using (var client = new ProbeUdpClient(new IPEndPoint(IPAddress.Loopback, 9), pool) { Io = io })
        {
            Assert.True(server.Start());
            EndPoint from = new IPEndPoint(IPAddress.Loopback, 0);
            Assert.Throws<InvalidOperationException>(() => server.Receive(ref from, new byte[10]));
            Assert.Throws<InvalidOperationException>(() => server.Receive(ref from, 10));

            Assert.True(client.Connect());
            client.ReceiveAsync();
            Assert.Throws<InvalidOperationException>(() => client.Receive(ref from, new byte[10], 0, 10));
            Assert.Empty(client.Probe.Errors);
        }

        await pool.AssertAllReturnedAsync();
    }
}
