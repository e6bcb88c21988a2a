using System;
using System.Buffers.Binary;
using System.Diagnostics;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Udp;

/// <summary>
/// Sends over a <see cref="SlowLink"/>, where the kernel makes a UDP sender wait: the engine's
/// queue, its pending sends and the awaitable send's backpressure run against real socket
/// backpressure, and a receiver on the far side checks that every datagram arrived, in order.
/// </summary>
[Collection(nameof(HostNetworkCollection))]
public class UdpSlowLinkTests
{
    private const int DatagramSize = 200;

    [SlowLinkFact]
    public async Task Datagrams_the_kernel_cannot_take_at_once_wait_in_the_queue_and_all_arrive_in_order()
    {
        await using var link = SlowLink.Create("2mbit");
        await link.StartReceiverAsync(TimeSpan.FromSeconds(2));
        var pool = new LeakCheckingBufferPool();
        var probe = new UdpProbe { KeepDatagrams = false };
        const int count = 1500; // about 1.4 s on the link
        long maxSending = 0;
        var client = new ProbeUdpClient(link.ReceiverEndpoint, pool, probe) { OptionSendBufferSize = 4096 };
        try
        {
            Assert.True(client.Connect());
            var datagram = new byte[DatagramSize];
            for (var i = 0; i < count; i++)
            {
                BinaryPrimitives.WriteInt32LittleEndian(datagram, i);
                if (!client.SendAsync(datagram))
                    Assert.Fail($"SendAsync refused datagram {i} while others were in flight; errors: {string.Join(", ", probe.Errors)}.");
                maxSending = Math.Max(maxSending, client.BytesSending);
            }

            Assert.True(client.BytesPending > 0, "Every datagram went out at once: the link did not make the sender wait.");
            await Wait.UntilAsync(() =>
            {
                maxSending = Math.Max(maxSending, client.BytesSending);
                return client.DatagramsSent == count;
            }, "every datagram to be handed to the kernel", TimeSpan.FromSeconds(30));

            Assert.True(maxSending > 0, "No send was ever pending in the kernel.");
            Assert.Equal(0, client.BytesPending);
            Assert.Equal(0, client.BytesSending);
            Assert.Equal((long)count * DatagramSize, client.BytesSent);
            Assert.Equal(count, probe.SentCount);
            probe.AssertNoErrors();
        }
        finally
        {
            // Bounded: an engine that never lets go of the socket fails the test instead of hanging it.
            await client.DisposeAsync().AsTask().WaitAsync(Wait.Default);
        }

        var (received, disorder) = await link.ReceiverReportAsync();
        Assert.Equal(count, received);
        Assert.True(disorder is null, $"The datagrams arrived out of order: {disorder}.");
        await pool.AssertAllReturnedAsync();
    }

    [SlowLinkFact]
    public async Task The_awaitable_send_waits_for_room_and_keeps_the_queue_within_its_limit()
    {
        await using var link = SlowLink.Create("2mbit");
        await link.StartReceiverAsync(TimeSpan.FromSeconds(2));
        var pool = new LeakCheckingBufferPool();
        var probe = new UdpProbe { KeepDatagrams = false };
        const int count = 1000;
        const int limit = 8 * 1024;
        var parked = 0;
        long maxPending = 0;
        var client = new ProbeUdpClient(link.ReceiverEndpoint, pool, probe) { OptionSendBufferSize = 4096, OptionSendBufferLimit = limit };
        try
        {
            Assert.True(client.Connect());
            var datagram = new byte[DatagramSize];
            for (var i = 0; i < count; i++)
            {
                BinaryPrimitives.WriteInt32LittleEndian(datagram, i);
                var send = client.SendAsync(datagram.AsMemory());
                if (!send.IsCompleted)
                    parked++;
                Assert.True(await send.AsTask().WaitAsync(Wait.Default), $"Datagram {i} was refused.");
                maxPending = Math.Max(maxPending, client.BytesPending);
            }

            await Wait.UntilAsync(() => client.DatagramsSent == count, "every datagram to be handed to the kernel", TimeSpan.FromSeconds(30));
            probe.AssertNoErrors();
        }
        finally
        {
            // Bounded: an engine that never lets go of the socket fails the test instead of hanging it.
            await client.DisposeAsync().AsTask().WaitAsync(Wait.Default);
        }

        Assert.True(parked > 0, "No awaitable send ever waited for room.");
        Assert.True(maxPending <= limit, $"The queue held {maxPending} bytes, past its limit of {limit}.");
        var (received, disorder) = await link.ReceiverReportAsync();
        Assert.Equal(count, received);
        Assert.True(disorder is null, $"The datagrams arrived out of order: {disorder}.");
        await pool.AssertAllReturnedAsync();
    }

    [SlowLinkFact]
    public async Task Disconnect_with_datagrams_waiting_returns_promptly_and_drops_only_what_the_kernel_never_took()
    {
        await using var link = SlowLink.Create("1mbit");
        await link.StartReceiverAsync(TimeSpan.FromSeconds(2));
        var pool = new LeakCheckingBufferPool();
        var probe = new UdpProbe { KeepDatagrams = false };
        const int count = 3000; // about 5.5 s on the link: far from done when the client disconnects
        long sent;
        var client = new ProbeUdpClient(link.ReceiverEndpoint, pool, probe) { OptionSendBufferSize = 4096 };
        try
        {
            Assert.True(client.Connect());
            var datagram = new byte[DatagramSize];
            for (var i = 0; i < count; i++)
            {
                BinaryPrimitives.WriteInt32LittleEndian(datagram, i);
                Assert.True(client.SendAsync(datagram));
            }

            await Wait.UntilAsync(() => client.DatagramsSent > 100, "the first datagrams to go out");
            var watch = Stopwatch.StartNew();
            Assert.True(client.Disconnect());
            Assert.True(watch.Elapsed < TimeSpan.FromSeconds(5), $"Disconnect took {watch.Elapsed} with datagrams waiting.");
            sent = client.DatagramsSent;
            Assert.True(sent < count, "Every datagram went out before the disconnect: the test proves nothing.");
            Assert.Equal(0, client.BytesPending);
            Assert.Equal(sent, probe.SentCount);
            Assert.Null(probe.LateHook);
            probe.AssertNoErrors();
        }
        finally
        {
            // Bounded: an engine that never lets go of the socket fails the test instead of hanging it.
            await client.DisposeAsync().AsTask().WaitAsync(Wait.Default);
        }

        // What the kernel took still crosses the link; nothing else does.
        var (received, disorder) = await link.ReceiverReportAsync();
        Assert.Equal(sent, received);
        Assert.True(disorder is null, $"The datagrams arrived out of order: {disorder}.");
        await pool.AssertAllReturnedAsync();
    }

    [SlowLinkFact]
    public async Task With_a_dedicated_thread_a_send_waits_while_the_kernel_is_full_and_every_datagram_arrives_in_order()
    {
        await using var link = SlowLink.Create("2mbit");
        await link.StartReceiverAsync(TimeSpan.FromSeconds(2));
        var pool = new LeakCheckingBufferPool();
        var probe = new UdpProbe { KeepDatagrams = false };
        const int count = 1500; // about 1.4 s on the link
        var client = new ProbeUdpClient(link.ReceiverEndpoint, pool, probe) { OptionSendBufferSize = 4096, OptionDedicatedThread = true };
        try
        {
            Assert.True(client.Connect());
            var datagram = new byte[DatagramSize];
            var watch = Stopwatch.StartNew();
            await Task.Run(() =>
            {
                for (var i = 0; i < count; i++)
                {
                    BinaryPrimitives.WriteInt32LittleEndian(datagram, i);
                    Assert.True(client.SendAsync(datagram), $"Datagram {i} was refused.");
                }
            }).WaitAsync(TimeSpan.FromSeconds(60));

            // Blocking sends: each was in the kernel when its call returned, none waits in the queue.
            Assert.True(watch.Elapsed > TimeSpan.FromSeconds(0.5), $"The sends took {watch.Elapsed}: the link did not make the sender wait.");
            Assert.Equal(count, client.DatagramsSent);
            Assert.Equal(0, client.BytesPending);
            Assert.Equal(count, probe.SentCount);
            probe.AssertNoErrors();
        }
        finally
        {
            await client.DisposeAsync().AsTask().WaitAsync(Wait.Default);
        }

        var (received, disorder) = await link.ReceiverReportAsync();
        Assert.Equal(count, received);
        Assert.True(disorder is null, $"The datagrams arrived out of order: {disorder}.");
        await pool.AssertAllReturnedAsync();
    }

    [SlowLinkFact]
    public async Task With_a_dedicated_thread_Disconnect_returns_promptly_while_a_sender_is_blocked_in_the_kernel()
    {
        await using var link = SlowLink.Create("1mbit");
        await link.StartReceiverAsync(TimeSpan.FromSeconds(2));
        var pool = new LeakCheckingBufferPool();
        var probe = new UdpProbe { KeepDatagrams = false };
        const int count = 3000; // about 5.5 s on the link: far from done when the client disconnects
        long sent;
        var client = new ProbeUdpClient(link.ReceiverEndpoint, pool, probe) { OptionSendBufferSize = 4096, OptionDedicatedThread = true };
        try
        {
            Assert.True(client.Connect());
            var refused = 0;
            var sender = Task.Run(() =>
            {
                var datagram = new byte[DatagramSize];
                for (var i = 0; i < count; i++)
                {
                    BinaryPrimitives.WriteInt32LittleEndian(datagram, i);
                    if (!client.SendAsync(datagram))
                        refused++;
                }
            });

            await Wait.UntilAsync(() => client.DatagramsSent > 100, "the first datagrams to go out");
            var watch = Stopwatch.StartNew();
            Assert.True(await Task.Run(client.Disconnect).WaitAsync(Wait.Default));
            await sender.WaitAsync(Wait.Default); // the blocked send was woken, and every later one is refused at once
            Assert.True(watch.Elapsed < TimeSpan.FromSeconds(5), $"Disconnect and the sender took {watch.Elapsed}.");
            sent = client.DatagramsSent;
            Assert.True(sent < count, "Every datagram went out before the disconnect: the test proves nothing.");
            Assert.Equal(count - sent, refused);
            Assert.Equal(0, client.BytesPending);
            Assert.Null(probe.LateHook);
            probe.AssertNoErrors();
        }
        finally
        {
            await client.DisposeAsync().AsTask().WaitAsync(Wait.Default);
        }

        // What the kernel took still crosses the link; nothing else does.
        var (received, disorder) = await link.ReceiverReportAsync();
        Assert.Equal(sent, received);
        Assert.True(disorder is null, $"The datagrams arrived out of order: {disorder}.");
        await pool.AssertAllReturnedAsync();
    }
}
