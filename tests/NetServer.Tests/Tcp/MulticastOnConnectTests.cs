using System;
using System.Collections.Generic;
using System.Linq;
using System.Net.Sockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;
using Xunit.Abstractions;

namespace NetServer.Tests.Tcp;

/// <summary>
/// A session receives every multicast made once it is in Sessions, from its connect hooks on:
/// what reaches it before it is ready waits in its queue, in order, under its send limit.
/// </summary>
public class MulticastOnConnectTests(ITestOutputHelper output)
{
    private const int Iterations = 500;

    /// <summary>
    /// NetCoreServer's loop: connect, wait until the server's OnConnected counted the session,
    /// multicast 4 bytes, read them. Every other round holds the server's OnConnected until the
    /// multicast was made, so the multicast surely falls inside the connect hooks.
    /// </summary>
    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task A_multicast_made_once_OnConnected_counted_the_session_always_reaches_it(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        var counted = 0;
        TaskCompletionSource? hold = null;
        TaskCompletionSource? inHook = null;
        harness.Probe.Connected = _ =>
        {
            Interlocked.Increment(ref counted);
            var release = Volatile.Read(ref hold);
            if (release is null)
                return;
            Volatile.Read(ref inHook)!.TrySetResult();
            Assert.True(release.Task.Wait(Wait.Default), "The test never released the hook.");
        };
        Assert.True(harness.Start());
        var message = Encoding.ASCII.GetBytes("test");

        for (var i = 0; i < Iterations; i++)
        {
            var held = i % 2 == 1;
            if (held)
            {
                Volatile.Write(ref inHook, new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously));
                Volatile.Write(ref hold, new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously));
            }

            var expected = i + 1;
            using var peer = await harness.ConnectRawAsync();
            if (held)
                await inHook!.Task.WaitAsync(Wait.Default);
            else
                await Wait.UntilAsync(() => Volatile.Read(ref counted) >= expected, "OnConnected to count the session");

            Assert.True(harness.Multicast(message));
            var release = Volatile.Read(ref hold);
            Volatile.Write(ref hold, null);
            release?.TrySetResult();

            var got = await Wait.ReadExactlyAsync(peer, message.Length, TimeSpan.FromSeconds(10));
            Assert.Equal("test", Encoding.ASCII.GetString(got));
        }

        output.WriteLine($"{Iterations} connect-then-multicast rounds over {kind}, none missed");
    }

    /// <summary>"X joined" multicast from the server's OnConnected reaches X and everyone before it.</summary>
    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task A_multicast_from_the_servers_OnConnected_reaches_the_new_session_and_every_other(TransportKind kind)
    {
        const int Peers = 6;
        await using var harness = new ServerHarness(kind);
        var joined = 0;
        var announced = 0;
        harness.Probe.Connected = session =>
        {
            var n = Interlocked.Increment(ref joined);
            Assert.True(harness.Multicast(Encoding.ASCII.GetBytes($"joined {n}\n")));
            Interlocked.Increment(ref announced); // the next peer connects only now, so "joined n" is made before "joined n+1"
        };
        Assert.True(harness.Start());

        var peers = new List<Socket>();
        try
        {
            for (var i = 0; i < Peers; i++)
            {
                peers.Add(await harness.ConnectRawAsync());
                await Wait.UntilAsync(() => Volatile.Read(ref announced) == peers.Count, "the server's OnConnected to multicast the join");
            }

            // Peer k (1-based) got the joins k..Peers, in order, and nothing else.
            for (var k = 1; k <= Peers; k++)
            {
                var expected = string.Concat(Enumerable.Range(k, Peers - k + 1).Select(n => $"joined {n}\n"));
                var got = await Wait.ReadExactlyAsync(peers[k - 1], expected.Length);
                Assert.Equal(expected, Encoding.ASCII.GetString(got));
            }
        }
        finally
        {
            foreach (var peer in peers)
                peer.Dispose();
        }
    }

    /// <summary>
    /// The session's own sends from its OnConnected and a multicast made meanwhile from another
    /// thread: each stream whole and in its own order, records never torn, every peer seeing the
    /// multicasts in one order.
    /// </summary>
    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Own_sends_from_OnConnected_and_a_concurrent_multicast_arrive_whole_and_in_order(TransportKind kind)
    {
        const int Own = 200;
        const int Multicasts = 200;
        const int Record = 8; // tag + 7 digits
        await using var harness = new ServerHarness(kind);
        var multicasting = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        harness.Probe.ConfigureSession = probe => probe.Connected = session =>
        {
            for (var i = 0; i < Own; i++)
            {
                if (i == Own / 4)
                    multicasting.TrySetResult(); // the multicast thread starts while this hook still sends
                Assert.True(session.SendAsync(Encoding.ASCII.GetBytes($"s{i:D7}")));
            }
        };
        Assert.True(harness.Start());

        using var first = await harness.ConnectRawAsync();
        await multicasting.Task.WaitAsync(Wait.Default);
        var sender = Task.Run(() =>
        {
            for (var i = 0; i < Multicasts; i++)
                Assert.True(harness.Multicast(Encoding.ASCII.GetBytes($"m{i:D7}")));
        });
        await sender.WaitAsync(Wait.Default);

        var got = Encoding.ASCII.GetString(await Wait.ReadExactlyAsync(first, (Own + Multicasts) * Record));
        var own = new List<int>();
        var multicast = new List<int>();
        for (var at = 0; at < got.Length; at += Record)
        {
            var record = got.Substring(at, Record);
            var number = int.Parse(record.AsSpan(1), System.Globalization.CultureInfo.InvariantCulture);
            (record[0] == 's' ? own : record[0] == 'm' ? multicast : throw new Xunit.Sdk.XunitException($"torn record '{record}' at {at}")).Add(number);
        }

        Assert.Equal(Enumerable.Range(0, Own), own);
        Assert.Equal(Enumerable.Range(0, Multicasts), multicast);
    }

    /// <summary>
    /// Over TLS, a peer that never sends its ClientHello: multicasts wait in the session's queue
    /// until the send limit, then the session is disconnected with SendBufferFull; the queue never
    /// grows past the limit and the other sessions keep receiving.
    /// </summary>
    [Fact]
    public async Task A_handshake_that_never_ends_cannot_grow_the_queue_past_the_send_limit()
    {
        if (!SecureTransport.Enabled)
            return;
        const int Limit = 64 * 1024;
        const int Message = 4 * 1024;
        await using var harness = new ServerHarness(TransportKind.Ssl);
        StreamSession? stalled = null;
        // Only the stalled (first) session gets the small limit: the healthy one may still be
        // handshaking when the multicasts start, and then waits for them in its queue as well.
        var configured = 0;
        harness.Probe.ConfigureSession = probe =>
        {
            if (Interlocked.Increment(ref configured) == 1)
                probe.Connected = session => session.OptionSendBufferLimit = Limit;
        };
        harness.Probe.Connected = session => stalled ??= session;
        Assert.True(harness.Start());

        // A raw TCP connection to the TLS port: the handshake starts and never progresses.
        using var silent = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await silent.ConnectAsync(harness.Endpoint).WaitAsync(Wait.Default);
        await Wait.UntilAsync(() => Volatile.Read(ref stalled) is not null, "the stalled session to connect");
        var session = Volatile.Read(ref stalled)!;
        var probe = harness.Probe.Sessions[session.Id];

        using var healthy = await harness.ConnectRawAsync();
        await harness.Probe.WaitForSessionsAsync(1);

        var message = new byte[Message];
        long peak = 0;
        var sent = 0;
        for (; sent < 4 * Limit / Message && session.IsConnected; sent++)
        {
            Assert.True(harness.Multicast(message));
            peak = Math.Max(peak, session.BytesPending);
        }

        Assert.Equal(DisconnectReason.SendBufferFull, await probe.DisconnectedSignal.Task.WaitAsync(Wait.Default));
        Assert.True(peak <= Limit, $"The queue of a session still handshaking reached {peak} bytes (limit {Limit}).");
        Assert.True(sent * Message > Limit / 2, "The session was disconnected before anything waited in its queue.");
        Assert.Equal(0, session.BytesPending);
        var got = await Wait.ReadExactlyAsync(healthy, sent * Message);
        Assert.Equal(sent * Message, got.Length);
    }
}
