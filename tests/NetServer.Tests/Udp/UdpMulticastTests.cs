using System;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Udp;

/// <summary>
/// Multicast: a server started with a multicast endpoint sends to a group; multicast clients
/// (SetupMulticast) listen on the group's address and port and join it on an interface. Each path
/// is probed first (<see cref="MulticastRoute"/>) and its tests skipped with the reason where this
/// machine does not loop multicast back. Every test uses a random group, so tests running side by
/// side never hear each other. Joining on the loopback path works only when the join names the
/// loopback interface (a join on interface 0 lands on the routed interface), so the loopback tests
/// also prove OptionMulticastInterface reaches the join. On the loopback interface Linux delivers
/// multicast to local listeners whatever IP_MULTICAST_LOOP says, so OptionMulticastLoopback is
/// tested on the routed paths. The tests that send and receive run in both I/O modes.
/// </summary>
// Restarts bind the same port again: alone, see PortRebindCollection.
[Collection(nameof(PortRebindCollection))]
public class UdpMulticastTests
{
    [MulticastTheory(MulticastPath.IPv4Loopback)]
    [MemberData(nameof(UdpModes.All), MemberType = typeof(UdpModes))]
    public Task Server_multicasts_to_every_joined_client_over_IPv4_loopback(UdpIo io) => MulticastsToEveryJoinedClientAsync(MulticastPath.IPv4Loopback, io);

    [MulticastTheory(MulticastPath.IPv4Routed)]
    [MemberData(nameof(UdpModes.All), MemberType = typeof(UdpModes))]
    public Task Server_multicasts_to_every_joined_client_over_IPv4_on_interface_0(UdpIo io) => MulticastsToEveryJoinedClientAsync(MulticastPath.IPv4Routed, io);

    [MulticastTheory(MulticastPath.IPv6Routed)]
    [MemberData(nameof(UdpModes.All), MemberType = typeof(UdpModes))]
    public Task Server_multicasts_to_every_joined_client_over_IPv6_site_local(UdpIo io) => MulticastsToEveryJoinedClientAsync(MulticastPath.IPv6Routed, io);

    [MulticastTheory(MulticastPath.IPv6LinkLocal)]
    [MemberData(nameof(UdpModes.All), MemberType = typeof(UdpModes))]
    public Task Server_multicasts_to_every_joined_client_over_IPv6_link_local(UdpIo io) => MulticastsToEveryJoinedClientAsync(MulticastPath.IPv6LinkLocal, io);

    private static async Task MulticastsToEveryJoinedClientAsync(MulticastPath path, UdpIo io)
    {
        var route = MulticastRoute.Get(path);
        var pool = new LeakCheckingBufferPool();
        var group = route.NewGroup();
        await using (var first = route.Listener(group, 0, pool, io))
        {
            first.OptionAutoReceive = true;
            Assert.True(first.Connect());
            var port = first.LocalEndpoint.Port;
            await using var second = route.Listener(group, port, pool, io);
            second.OptionAutoReceive = true;
            Assert.True(second.Connect());
            first.JoinMulticastGroup(group);
            second.JoinMulticastGroup(group.ToString());
            Assert.Equal(new[] { "connecting", "connected", "joined " + group }, first.Probe.Events);
            Assert.Equal(new[] { "connecting", "connected", "joined " + group }, second.Probe.Events);

            await using (var server = route.Sender(pool, io))
            {
                Assert.True(server.Start(group, port));
                Assert.Equal(new IPEndPoint(group, port), server.MulticastEndpoint);

                // Every Multicast flavour, then an end marker.
                Assert.Equal(3, server.Multicast("one"));
                Assert.True(server.MulticastAsync("two"u8.ToArray()));
                Assert.True(await server.MulticastAsync("three"u8.ToArray().AsMemory()));
                Assert.Equal(4, server.Multicast("xfourx"u8.ToArray(), 1, 4));
                Assert.True(server.MulticastAsync("five".AsSpan()));
                Assert.Equal(3, server.Multicast("end"u8));

                var expected = new[] { "one", "two", "three", "four", "five", "end" };
                foreach (var client in new[] { first, second })
                {
                    await Wait.UntilAsync(() => client.Probe.ReceivedCount >= expected.Length, $"the multicast datagrams at {client.LocalEndpoint}");
                    Assert.Equal(expected.Order(), client.Probe.Texts().Order());
                    Assert.All(client.Probe.Received, r => Assert.Equal(server.Endpoint, r.From));
                    client.Probe.AssertNoErrors();
                }

                await Wait.UntilAsync(() => server.DatagramsSent == expected.Length, "the send counter");
                Assert.Equal(expected.Sum(e => e.Length), server.BytesSent);
                server.Probe.AssertNoErrors();
            }

            Assert.Equal(expected: 6, first.Probe.ReceivedCount);
            Assert.Equal(expected: 6, second.Probe.ReceivedCount);
        }

        await pool.AssertAllReturnedAsync();
    }

    [MulticastTheory(MulticastPath.IPv4Loopback)]
    [MemberData(nameof(UdpModes.All), MemberType = typeof(UdpModes))]
    public Task After_LeaveMulticastGroup_no_more_datagrams_arrive_over_IPv4(UdpIo io) => LeavingStopsTheGroupsDatagramsAsync(MulticastPath.IPv4Loopback, io);

    [MulticastTheory(MulticastPath.IPv6Routed)]
    [MemberData(nameof(UdpModes.All), MemberType = typeof(UdpModes))]
    public Task After_LeaveMulticastGroup_no_more_datagrams_arrive_over_IPv6(UdpIo io) => LeavingStopsTheGroupsDatagramsAsync(MulticastPath.IPv6Routed, io);

    private static async Task LeavingStopsTheGroupsDatagramsAsync(MulticastPath path, UdpIo io)
    {
        var route = MulticastRoute.Get(path);
        var pool = new LeakCheckingBufferPool();
        var group = route.NewGroup();
        await using (var client = route.Listener(group, 0, pool, io))
        {
            client.Probe.KeepReceiving();
            Assert.True(client.Connect());
            await using var server = route.Sender(pool, io);
            Assert.True(server.Start(group, client.LocalEndpoint.Port));

            client.JoinMulticastGroup(group);
            Assert.Equal(2, server.Multicast("in"));
            await Wait.UntilAsync(() => client.Probe.ReceivedCount == 1, "the datagram while joined");

            client.LeaveMulticastGroup(group);
            Assert.Equal(3, server.Multicast("out"));

            // Joining again lets the next datagram through: had "out" been delivered, it would be
            // waiting ahead of it. (No other socket of this host has joined this random group.)
            client.JoinMulticastGroup(group.ToString());
            Assert.Equal(5, server.Multicast("again"));
            await Wait.UntilAsync(() => client.Probe.ReceivedCount >= 2, "the datagram after joining again");
            Assert.Equal(new[] { "in", "again" }, client.Probe.Texts());

            client.LeaveMulticastGroup(group.ToString());
            Assert.Equal(
                new[] { "connecting", "connected", "joined " + group, "left " + group, "joined " + group, "left " + group },
                client.Probe.Events);
            client.Probe.AssertNoErrors();
        }

        await pool.AssertAllReturnedAsync();
    }

    [MulticastTheory(MulticastPath.IPv4Routed)]
    [MemberData(nameof(UdpModes.All), MemberType = typeof(UdpModes))]
    public Task With_OptionMulticastLoopback_false_this_hosts_listeners_hear_nothing_over_IPv4(UdpIo io) => LoopbackOffIsHeardByNobodyHereAsync(MulticastPath.IPv4Routed, io);

    [MulticastTheory(MulticastPath.IPv6Routed)]
    [MemberData(nameof(UdpModes.All), MemberType = typeof(UdpModes))]
    public Task With_OptionMulticastLoopback_false_this_hosts_listeners_hear_nothing_over_IPv6(UdpIo io) => LoopbackOffIsHeardByNobodyHereAsync(MulticastPath.IPv6Routed, io);

    private static async Task LoopbackOffIsHeardByNobodyHereAsync(MulticastPath path, UdpIo io)
    {
        var route = MulticastRoute.Get(path);
        Assert.False(route.IsLoopbackInterface);
        var pool = new LeakCheckingBufferPool();
        var group = route.NewGroup();
        await using (var client = route.Listener(group, 0, pool, io))
        {
            client.OptionAutoReceive = true;
            Assert.True(client.Connect());
            client.JoinMulticastGroup(group);
            var port = client.LocalEndpoint.Port;

            await using var muted = route.Sender(pool, io);
            muted.OptionMulticastLoopback = false;
            Assert.True(muted.Start(group, port));
            await using var heard = route.Sender(pool, io);
            heard.OptionMulticastLoopback = true;
            Assert.True(heard.Start(group, port));

            // The kernel takes the muted datagram (time to live 0: it goes nowhere), then the heard one.
            Assert.Equal(5, muted.Multicast("muted"));
            Assert.Equal(5, heard.Multicast("heard"));
            await Wait.UntilAsync(() => client.Probe.ReceivedCount >= 1, "the datagram sent with loopback on");
            Assert.Equal(new[] { "heard" }, client.Probe.Texts());
            Assert.Equal(1, muted.DatagramsSent);
            muted.Probe.AssertNoErrors();
        }

        await pool.AssertAllReturnedAsync();
    }

    [MulticastTheory(MulticastPath.IPv4Loopback)]
    [MemberData(nameof(UdpModes.All), MemberType = typeof(UdpModes))]
    public async Task Restart_keeps_the_multicast_endpoint(UdpIo io)
    {
        var route = MulticastRoute.Get(MulticastPath.IPv4Loopback);
        var pool = new LeakCheckingBufferPool();
        var group = route.NewGroup();
        await using (var client = route.Listener(group, 0, pool, io))
        {
            client.OptionAutoReceive = true;
            Assert.True(client.Connect());
            client.JoinMulticastGroup(group);
            await using var server = route.Sender(pool, io, address: UdpTest.RebindableLoopback().Address); // Restart binds its port again
            Assert.True(server.Start(group.ToString(), client.LocalEndpoint.Port));
            Assert.Equal(1, server.Multicast("1"));
            Assert.True(server.Restart());
            Assert.Equal(new IPEndPoint(group, client.LocalEndpoint.Port), server.MulticastEndpoint);
            Assert.Equal(1, server.Multicast("2"));
            await Wait.UntilAsync(() => client.Probe.ReceivedCount >= 2, "both datagrams");
            Assert.Equal(new[] { "1", "2" }, client.Probe.Texts().Order());
        }

        await pool.AssertAllReturnedAsync();
    }

    [Fact]
    public async Task Multicast_options_reach_the_socket_only_when_set()
    {
        var pool = new LeakCheckingBufferPool();
        var loopbackIndex = MulticastRoute.Get(MulticastPath.IPv4Loopback).ActualInterfaceIndex;
        await using (var plain = new ProbeUdpServer(UdpTest.Loopback(AddressFamily.InterNetwork), pool))
        await using (var v4 = new ProbeUdpServer(UdpTest.Loopback(AddressFamily.InterNetwork), pool) { OptionMulticastTimeToLive = 7, OptionMulticastLoopback = false, OptionMulticastInterface = loopbackIndex })
        await using (var v6 = new ProbeUdpServer(UdpTest.Loopback(AddressFamily.InterNetworkV6), pool) { OptionMulticastTimeToLive = 3, OptionMulticastLoopback = false, OptionMulticastInterface = loopbackIndex })
        {
            Assert.True(plain.Start());
            Assert.True(v4.Start());
            Assert.True(v6.Start());

            // The kernel's defaults stay when nothing was set: time to live 1, loopback on.
            Assert.Equal(1, (int)plain.Socket!.GetSocketOption(SocketOptionLevel.IP, SocketOptionName.MulticastTimeToLive)!);
            Assert.Equal(1, (int)plain.Socket.GetSocketOption(SocketOptionLevel.IP, SocketOptionName.MulticastLoopback)!);

            Assert.Equal(7, (int)v4.Socket!.GetSocketOption(SocketOptionLevel.IP, SocketOptionName.MulticastTimeToLive)!);
            Assert.Equal(0, (int)v4.Socket.GetSocketOption(SocketOptionLevel.IP, SocketOptionName.MulticastLoopback)!);
            Assert.Equal(3, (int)v6.Socket!.GetSocketOption(SocketOptionLevel.IPv6, SocketOptionName.MulticastTimeToLive)!);
            Assert.Equal(0, (int)v6.Socket.GetSocketOption(SocketOptionLevel.IPv6, SocketOptionName.MulticastLoopback)!);
            Assert.Equal(loopbackIndex, (int)v6.Socket.GetSocketOption(SocketOptionLevel.IPv6, SocketOptionName.MulticastInterface)!);
        }

        await pool.AssertAllReturnedAsync();
    }

    [Fact]
    public async Task Joining_and_leaving_report_bad_groups_and_raise_no_hook()
    {
        var pool = new LeakCheckingBufferPool();
        await using (var client = new ProbeUdpClient(new IPEndPoint(IPAddress.Loopback, 0), pool))
        {
            Assert.Throws<InvalidOperationException>(() => client.JoinMulticastGroup(IPAddress.Parse("239.255.0.1")));
            Assert.Throws<InvalidOperationException>(() => client.LeaveMulticastGroup(IPAddress.Parse("239.255.0.1")));
            client.SetupMulticast(true);
            Assert.True(client.OptionMulticast);
            Assert.True(client.OptionReuseAddress);
            Assert.True(client.Connect());
            Assert.Throws<ArgumentException>(() => client.JoinMulticastGroup("not an address"));
            Assert.Throws<ArgumentNullException>(() => client.JoinMulticastGroup((IPAddress)null!));
            Assert.Throws<SocketException>(() => client.JoinMulticastGroup(IPAddress.Loopback));

            // Leaving a group never joined is refused by the system.
            Assert.Throws<SocketException>(() => client.LeaveMulticastGroup(IPAddress.Parse("239.255.0.1")));
            Assert.Equal(new[] { "connecting", "connected" }, client.Probe.Events);
            client.SetupMulticast(false);
            Assert.False(client.OptionMulticast);
        }

        await pool.AssertAllReturnedAsync();
    }

    [Fact]
    public async Task A_multicast_client_asked_for_port_0_reports_the_port_it_listens_on()
    {
        var pool = new LeakCheckingBufferPool();
        await using (var client = new ProbeUdpClient(new IPEndPoint(IPAddress.Loopback, 0), pool))
        {
            client.SetupMulticast(true);
            Assert.True(client.Connect());
            var bound = (IPEndPoint)client.Socket!.LocalEndPoint!;
            Assert.NotEqual(0, bound.Port);
            Assert.Equal(bound.Port, client.Port);
            Assert.Equal(bound, client.Endpoint);

            // Reconnecting listens on that same port again.
            Assert.True(client.Reconnect());
            Assert.Equal(bound.Port, ((IPEndPoint)client.Socket!.LocalEndPoint!).Port);
        }

        await pool.AssertAllReturnedAsync();
    }
}
