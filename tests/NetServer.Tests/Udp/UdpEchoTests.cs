using System;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Udp;

/// <summary>
/// The round trip through a UdpServer and UdpClient, the NetCoreServer way (ReceiveAsync after
/// each datagram, SendAsync or Send back to the sender) and with OptionAutoReceive: every datagram
/// comes back once, whole, to the client that sent it, with exact counters. Senders keep a window
/// of unanswered datagrams well inside the receivers' socket buffers, so the kernel never drops one
/// and every count can be exact. Every test runs in both I/O modes.
/// </summary>
public class UdpEchoTests
{
    private const int Window = 8;

    public static TheoryData<UdpIo, AddressFamily> Families => UdpModes.Each(AddressFamily.InterNetwork, AddressFamily.InterNetworkV6);

    public static TheoryData<UdpIo, AddressFamily, int> LargestDatagrams => UdpModes.Each(
        (AddressFamily.InterNetwork, UdpTest.MaxIPv4Payload),
        (AddressFamily.InterNetworkV6, UdpPeer.MaxDatagramPayload));

    [Theory]
    [MemberData(nameof(Families))]
    public async Task Echo_round_trips_datagrams_with_one_client(UdpIo io, AddressFamily family)
    {
        var pool = new LeakCheckingBufferPool();
        const int count = 200;
        var expected = Enumerable.Range(0, count).Select(i => $"hello {i}").ToList();
        await using (var server = new ProbeUdpServer(UdpTest.Loopback(family), pool) { Io = io, OptionReceiveBufferSize = UdpTest.LargeBuffer })
        {
            server.Probe.Echo();
            Assert.True(server.Start());
            Assert.NotEqual(0, server.Port);
            Assert.Equal(server.Port, server.IPEndpoint.Port);

            using var window = new SemaphoreSlim(Window);
            await using var client = new ProbeUdpClient(server.IPEndpoint, pool) { Io = io, OptionReceiveBufferSize = UdpTest.LargeBuffer };
            client.Probe.Started = peer => peer.ReceiveAsync();
            client.Probe.OnReceive = (peer, _, _, _, _) =>
            {
                window.Release();
                peer.ReceiveAsync();
            };
            Assert.True(client.Connect());
            Assert.True(client.IsConnected);

            foreach (var text in expected)
            {
                Assert.True(await window.WaitAsync(Wait.Default), "an echo did not come back");
                Assert.True(client.SendAsync(text));
            }

            await Wait.UntilAsync(() => client.Probe.ReceivedCount == count, $"{count} echoes");
            Assert.Equal(expected.Order(), client.Probe.Texts().Order());
            var bytes = expected.Sum(t => t.Length);

            // Every datagram came from the client, and every echo from the server.
            Assert.All(server.Probe.Received, r => Assert.Equal(client.LocalEndpoint, r.From));
            Assert.All(client.Probe.Received, r => Assert.Equal(server.Endpoint, r.From));

            // A sender counts a datagram once the kernel's send call returns, which may be after
            // the peer already has it.
            await Wait.UntilAsync(() => server.DatagramsSent == count && client.DatagramsSent == count, "the send counters");
            Assert.Equal(count, server.DatagramsReceived);
            Assert.Equal(count, server.DatagramsSent);
            Assert.Equal(bytes, server.BytesReceived);
            Assert.Equal(bytes, server.BytesSent);
            Assert.Equal(count, client.DatagramsSent);
            Assert.Equal(count, client.DatagramsReceived);
            Assert.Equal(bytes, client.BytesSent);
            Assert.Equal(bytes, client.BytesReceived);
            Assert.Equal(count, client.Probe.SentCount);

            Assert.True(client.Disconnect());
            Assert.True(server.Stop());
            server.Probe.AssertNoErrors();
            client.Probe.AssertNoErrors();
            Assert.DoesNotContain("echo refused", server.Probe.Events);
        }

        await pool.AssertAllReturnedAsync();
    }

    [Theory]
    [MemberData(nameof(UdpModes.All), MemberType = typeof(UdpModes))]
    public async Task Echo_serves_many_clients_at_once_and_each_gets_only_its_own_datagrams(UdpIo io)
    {
        const int clients = 16;
        const int perClient = 100;
        var pool = new LeakCheckingBufferPool();
        await using (var server = new ProbeUdpServer(UdpTest.Loopback(AddressFamily.InterNetwork), pool) { Io = io, OptionReceiveBufferSize = UdpTest.LargeBuffer })
        {
            server.Probe.Echo();
            server.Probe.KeepDatagrams = false;
            Assert.True(server.Start());

            var peers = Enumerable.Range(0, clients).Select(_ => new ProbeUdpClient(server.IPEndpoint, pool) { Io = io, OptionReceiveBufferSize = UdpTest.LargeBuffer }).ToArray();
            var windows = peers.Select(_ => new SemaphoreSlim(Window)).ToArray();
            try
            {
                for (var c = 0; c < clients; c++)
                {
                    var window = windows[c];
                    peers[c].Probe.Started = peer => peer.ReceiveAsync();
                    peers[c].Probe.OnReceive = (peer, _, _, _, _) =>
                    {
                        window.Release();
                        peer.ReceiveAsync();
                    };
                    Assert.True(peers[c].Connect());
                }

                await Task.WhenAll(Enumerable.Range(0, clients).Select(c => Task.Run(async () =>
                {
                    for (var i = 0; i < perClient; i++)
                    {
                        Assert.True(await windows[c].WaitAsync(Wait.Default), $"client {c}: an echo did not come back");
                        Assert.True(peers[c].SendAsync(UdpTest.Datagram((c * 1000) + i, 8 + (i % 200))));
                    }
                })));

                await Wait.UntilAsync(() => peers.All(p => p.Probe.ReceivedCount == perClient), "every echo");
                for (var c = 0; c < clients; c++)
                {
                    var ids = peers[c].Probe.Received.Select(r => UdpTest.IdOf(r.Data)).Order().ToArray();
                    Assert.Equal(Enumerable.Range(c * 1000, perClient), ids);
                    peers[c].Probe.AssertNoErrors();
                }

                Assert.Equal(clients * perClient, server.DatagramsReceived);
                await Wait.UntilAsync(() => server.DatagramsSent == clients * perClient, "the server's send counter");
                server.Probe.AssertNoErrors();
            }
            finally
            {
                foreach (var peer in peers)
                    await peer.DisposeAsync();
                foreach (var window in windows)
                    window.Dispose();
            }
        }

        await pool.AssertAllReturnedAsync();
    }

    [Theory]
    [MemberData(nameof(UdpModes.All), MemberType = typeof(UdpModes))]
    public async Task Echo_answers_more_distinct_peers_than_the_endpoint_caches_hold(UdpIo io)
    {
        // The net target maps raw addresses to endpoint objects through caches that start over
        // past 1,024 entries: every peer must still be named and answered right, twice over.
        const int peers = 1100;
        var pool = new LeakCheckingBufferPool();
        await using (var server = new ProbeUdpServer(UdpTest.Loopback(AddressFamily.InterNetwork), pool) { Io = io, OptionAutoReceive = true, OptionReceiveBufferSize = UdpTest.LargeBuffer })
        {
            server.Probe.OnReceive = (peer, from, buffer, offset, size) => Assert.True(peer.SendAsync(from, buffer, offset, size));
            Assert.True(server.Start());
            var raws = Enumerable.Range(0, peers).Select(_ => new RawUdp(IPAddress.Loopback, receiveBufferSize: 64 * 1024)).ToArray();
            try
            {
                for (var round = 0; round < 2; round++)
                {
                    var echoes = raws.Select(raw => raw.ReceiveAsync("the echo")).ToArray();
                    for (var p = 0; p < peers; p++)
                        raws[p].Send(server.Endpoint, UdpTest.Datagram((round * peers) + p, 12));
                    var answers = await Task.WhenAll(echoes);
                    for (var p = 0; p < peers; p++)
                    {
                        Assert.Equal((round * peers) + p, UdpTest.IdOf(answers[p].Data, 12));
                        Assert.Equal(server.Endpoint, answers[p].From);
                    }
                }

                foreach (var (from, data) in server.Probe.Received)
                    Assert.Equal(raws[UdpTest.IdOf(data) % peers].Endpoint, from);
                Assert.Equal(2 * peers, server.DatagramsReceived);
            }
            finally
            {
                foreach (var raw in raws)
                    raw.Dispose();
            }

            server.Probe.AssertNoErrors();
        }

        await pool.AssertAllReturnedAsync();
    }

    [Theory]
    [MemberData(nameof(UdpModes.All), MemberType = typeof(UdpModes))]
    public async Task Echo_with_OptionAutoReceive_needs_no_ReceiveAsync(UdpIo io)
    {
        const int count = 300;
        var pool = new LeakCheckingBufferPool();
        await using (var server = new ProbeUdpServer(UdpTest.Loopback(AddressFamily.InterNetwork), pool) { Io = io, OptionAutoReceive = true, OptionReceiveBufferSize = UdpTest.LargeBuffer })
        {
            server.Probe.OnReceive = (peer, from, buffer, offset, size) => Assert.True(peer.SendAsync(from, buffer, offset, size));
            Assert.True(server.Start());

            using var window = new SemaphoreSlim(Window);
            await using var client = new ProbeUdpClient(server.IPEndpoint, pool) { Io = io, OptionAutoReceive = true, OptionReceiveBufferSize = UdpTest.LargeBuffer };
            client.Probe.OnReceive = (_, _, _, _, _) => window.Release();
            Assert.True(client.Connect());
            for (var i = 0; i < count; i++)
            {
                Assert.True(await window.WaitAsync(Wait.Default), "an echo did not come back");
                Assert.True(client.SendAsync(UdpTest.Datagram(i, 4 + i)));
            }

            await Wait.UntilAsync(() => client.Probe.ReceivedCount == count, $"{count} echoes");
            Assert.Equal(Enumerable.Range(0, count), client.Probe.Received.Select(r => UdpTest.IdOf(r.Data)).Order());
            Assert.Equal(count, server.DatagramsReceived);
            server.Probe.AssertNoErrors();
            client.Probe.AssertNoErrors();
        }

        await pool.AssertAllReturnedAsync();
    }

    [Theory]
    [MemberData(nameof(UdpModes.All), MemberType = typeof(UdpModes))]
    public async Task Echo_with_the_blocking_Send_inside_OnReceived_queues_and_returns_the_size(UdpIo io)
    {
        // The NetCoreServer samples echo with Send(endpoint, buffer, offset, size) in OnReceived:
        // inside a hook it must not wait, and it reports the datagram's size.
        const int count = 100;
        var pool = new LeakCheckingBufferPool();
        var results = new System.Collections.Concurrent.ConcurrentQueue<long>();
        await using (var server = new ProbeUdpServer(UdpTest.Loopback(AddressFamily.InterNetwork), pool) { Io = io, OptionReceiveBufferSize = UdpTest.LargeBuffer })
        {
            server.Probe.Started = peer => peer.ReceiveAsync();
            server.Probe.OnReceive = (peer, from, buffer, offset, size) =>
            {
                results.Enqueue(peer.Send(from, buffer, offset, size));
                peer.ReceiveAsync();
            };
            Assert.True(server.Start());

            using var peer = new RawUdp(IPAddress.Loopback);
            for (var i = 0; i < count; i++)
            {
                peer.Send(server.Endpoint, UdpTest.Datagram(i, 10 + i));
                var (data, from) = await peer.ReceiveAsync($"echo {i}");
                Assert.Equal(i, UdpTest.IdOf(data, 10 + i));
                Assert.Equal(server.Endpoint, from);
            }

            await Wait.UntilAsync(() => results.Count == count, "every Send to return");
            Assert.Equal(Enumerable.Range(0, count).Select(i => (long)(10 + i)), results);
            server.Probe.AssertNoErrors();
        }

        await pool.AssertAllReturnedAsync();
    }

    [Theory]
    [MemberData(nameof(UdpModes.All), MemberType = typeof(UdpModes))]
    public async Task Empty_datagram_is_delivered_and_echoed(UdpIo io)
    {
        var pool = new LeakCheckingBufferPool();
        await using (var server = new ProbeUdpServer(UdpTest.Loopback(AddressFamily.InterNetwork), pool) { Io = io })
        {
            server.Probe.Echo();
            Assert.True(server.Start());
            using var peer = new RawUdp(IPAddress.Loopback);

            peer.Send(server.Endpoint, ReadOnlySpan<byte>.Empty);
            var (empty, from) = await peer.ReceiveAsync("the empty echo");
            Assert.Empty(empty);
            Assert.Equal(server.Endpoint, from);
            peer.Send(server.Endpoint, "x");
            Assert.Equal("x", await peer.ReceiveTextAsync("the next echo"));

            await Wait.UntilAsync(() => server.DatagramsSent == 2, "the server's send counter");
            Assert.Equal(2, server.DatagramsReceived);
            Assert.Equal(1, server.BytesReceived);
            Assert.Equal(new long[] { 0, 1 }, server.Probe.SentSizes);
            Assert.Empty(server.Probe.Received.First().Data);
            server.Probe.AssertNoErrors();
        }

        await pool.AssertAllReturnedAsync();
    }

    [Theory]
    [MemberData(nameof(LargestDatagrams))]
    public async Task Largest_datagram_of_each_family_round_trips_whole(UdpIo io, AddressFamily family, int size)
    {
        var pool = new LeakCheckingBufferPool();
        await using (var server = new ProbeUdpServer(UdpTest.Loopback(family), pool) { Io = io, OptionReceiveBufferSize = UdpTest.LargeBuffer })
        {
            server.Probe.Echo();
            Assert.True(server.Start());
            using var peer = new RawUdp(UdpTest.Loopback(family).Address);

            for (var i = 0; i < 3; i++)
            {
                peer.Send(server.Endpoint, UdpTest.Datagram(i, size - i));
                Assert.Equal(i, UdpTest.IdOf((await peer.ReceiveAsync($"echo {i}")).Data, size - i));
            }

            await Wait.UntilAsync(() => server.DatagramsSent == 3, "the server's send counter");
            Assert.Equal((3L * size) - 3, server.BytesReceived);
            Assert.Equal((3L * size) - 3, server.BytesSent);
            server.Probe.AssertNoErrors();
        }

        await pool.AssertAllReturnedAsync();
    }

    [Theory]
    [MemberData(nameof(UdpModes.All), MemberType = typeof(UdpModes))]
    public async Task Server_and_client_on_a_host_name_resolve_it_when_they_start(UdpIo io)
    {
        var pool = new LeakCheckingBufferPool();
        await using (var server = new ProbeUdpServer(new DnsEndPoint("localhost", 0, AddressFamily.InterNetwork), pool) { Io = io })
        {
            server.Probe.Echo();
            Assert.True(server.Start());
            var bound = Assert.IsType<IPEndPoint>(server.Endpoint);
            Assert.True(IPAddress.IsLoopback(bound.Address));
            Assert.NotEqual(0, bound.Port);

            await using var client = new ProbeUdpClient(new DnsEndPoint("localhost", bound.Port, AddressFamily.InterNetwork), pool) { Io = io };
            client.Probe.KeepReceiving();
            Assert.True(client.Connect());
            Assert.Equal(5, client.Send("hello"));
            await Wait.UntilAsync(() => client.Probe.ReceivedCount == 1, "the echo");
            Assert.Equal("hello", client.Probe.Texts().Single());
        }

        await pool.AssertAllReturnedAsync();
    }

    [Theory]
    [MemberData(nameof(UdpModes.All), MemberType = typeof(UdpModes))]
    public async Task Client_with_OptionReceiveFromAnySender_hears_every_sender_while_a_connected_one_hears_only_its_server(UdpIo io)
    {
        var pool = new LeakCheckingBufferPool();
        using var server = new RawUdp(IPAddress.Loopback);
        using var stranger = new RawUdp(IPAddress.Loopback);
        await using (var open = new ProbeUdpClient(server.Endpoint, pool) { Io = io, OptionReceiveFromAnySender = true })
        await using (var connected = new ProbeUdpClient(server.Endpoint, pool) { Io = io })
        {
            open.Probe.KeepReceiving();
            connected.Probe.KeepReceiving();
            Assert.True(open.Connect());
            Assert.True(connected.Connect());

            // Both say hello so the server knows where they are; the stranger then writes first,
            // the server after it: a connected socket's kernel filter drops the stranger's datagram.
            Assert.Equal(1, open.Send("o"));
            Assert.Equal(1, connected.Send("c"));
            var hellos = new[] { await server.ReceiveAsync("hello 1"), await server.ReceiveAsync("hello 2") };
            var openAt = hellos.Single(h => h.Data[0] == (byte)'o').From;
            var connectedAt = hellos.Single(h => h.Data[0] == (byte)'c').From;

            stranger.Send(openAt, "stranger");
            stranger.Send(connectedAt, "stranger");
            server.Send(openAt, "server");
            server.Send(connectedAt, "server");

            await Wait.UntilAsync(() => open.Probe.ReceivedCount == 2 && connected.Probe.ReceivedCount == 1, "the datagrams");
            Assert.Equal(new[] { "server", "stranger" }, open.Probe.Texts().Order());
            Assert.Equal(new[] { "server" }, connected.Probe.Texts());
            Assert.Contains(open.Probe.Received, r => r.From.Equals(stranger.Endpoint));
        }

        await pool.AssertAllReturnedAsync();
    }
}
