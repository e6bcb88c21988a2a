using System;
using System.Collections.Concurrent;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Udp;

/// <summary>
/// What only <see cref="UdpPeer.OptionDedicatedThread"/> promises: a receive thread of the
/// socket's own for its whole life (never a pool thread) that ends with the socket, even when
/// closed while blocked in a receive; a mode fixed at Start/Connect; the compatible blocking
/// Receive refused as long as that thread runs; and, with nothing queued, a send that is one
/// blocking call from the caller's bytes.
/// The guarantees shared with the default mode are the theories of the other UDP test classes.
/// </summary>
// Restarts bind the same port again: alone, see PortRebindCollection.
[Collection(nameof(PortRebindCollection))]
public class UdpDedicatedThreadTests
{
    private static readonly TimeSpan s_prompt = TimeSpan.FromSeconds(2);

    /// <summary>Where a dedicated receive thread waits when the socket closes.</summary>
    public enum Waiting
    {
        /// <summary>Blocked in the socket's receive call (OptionAutoReceive, nothing arriving).</summary>
        InReceive,

        /// <summary>For a ReceiveAsync() (the wish it had was met, nobody asked again).</summary>
        ForAWish,
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task OnReceived_runs_on_one_thread_of_the_socket_for_its_whole_life_never_a_pool_thread(bool autoReceive)
    {
        const int count = 60;
        var pool = new LeakCheckingBufferPool();
        var serverThreads = new ConcurrentQueue<Thread>();
        var clientThreads = new ConcurrentQueue<Thread>();
        await using (var server = new ProbeUdpServer(UdpTest.Loopback(AddressFamily.InterNetwork), pool) { Io = UdpIo.DedicatedThread, OptionAutoReceive = autoReceive })
        {
            server.Probe.OnReceive = (peer, from, buffer, offset, size) =>
            {
                serverThreads.Enqueue(Thread.CurrentThread);
                Assert.True(peer.SendAsync(from, buffer, offset, size));
            };
            Assert.True(server.Start());
            await using var client = new ProbeUdpClient(server.IPEndpoint, pool) { Io = UdpIo.DedicatedThread, OptionAutoReceive = autoReceive };
            client.Probe.OnReceive = (_, _, _, _, _) => clientThreads.Enqueue(Thread.CurrentThread);
            Assert.True(client.Connect());

            for (var i = 0; i < count; i++)
            {
                // Without OptionAutoReceive each datagram is asked for from another thread, so the
                // receive thread waits for a wish between datagrams and is woken for each.
                if (!autoReceive)
                {
                    await Task.Run(server.ReceiveAsync);
                    await Task.Run(client.ReceiveAsync);
                }

                Assert.Equal(8, client.Send(UdpTest.Datagram(i, 8)));
                await Wait.UntilAsync(() => client.Probe.ReceivedCount == i + 1, $"echo {i}");
                if (i % 20 == 19)
                    await Task.Delay(20); // idle for a moment: the thread waits (for a wish, or in the receive call)
            }

            var serverThread = Assert.Single(serverThreads.Distinct());
            var clientThread = Assert.Single(clientThreads.Distinct());
            Assert.Equal(count, serverThreads.Count);
            Assert.Equal(count, clientThreads.Count);
            Assert.NotSame(serverThread, clientThread);
            foreach (var thread in new[] { serverThread, clientThread })
            {
                Assert.False(thread.IsThreadPoolThread, $"OnReceived ran on pool thread {thread.ManagedThreadId}.");
                Assert.True(thread.IsAlive);
            }

            Assert.Equal(Enumerable.Range(0, count), client.Probe.Received.Select(r => UdpTest.IdOf(r.Data, 8)));

            // The thread ends with its socket.
            Assert.True(client.Disconnect());
            Assert.True(server.Stop());
            Assert.True(await HarnessExtensions.RunBlocking(() => serverThread.Join(Wait.Default) && clientThread.Join(Wait.Default)).WaitAsync(Wait.Default), "a receive thread outlived its socket");
            server.Probe.AssertNoErrors();
            client.Probe.AssertNoErrors();
        }

        await pool.AssertAllReturnedAsync();
    }

    [Theory]
    [InlineData(Waiting.InReceive, false)]
    [InlineData(Waiting.InReceive, true)]
    [InlineData(Waiting.ForAWish, false)]
    [InlineData(Waiting.ForAWish, true)]
    public async Task Closing_the_socket_ends_the_receive_thread_promptly_wherever_it_waits(Waiting state, bool client)
    {
        var pool = new LeakCheckingBufferPool();
        using var other = new RawUdp(IPAddress.Loopback);
        UdpPeer peer = client
            ? new ProbeUdpClient(other.Endpoint, pool) { Io = UdpIo.DedicatedThread, OptionAutoReceive = state == Waiting.InReceive }
            : new ProbeUdpServer(UdpTest.Loopback(AddressFamily.InterNetwork), pool) { Io = UdpIo.DedicatedThread, OptionAutoReceive = state == Waiting.InReceive };
        var probe = client ? ((ProbeUdpClient)peer).Probe : ((ProbeUdpServer)peer).Probe;
        var receiver = new TaskCompletionSource<(Thread Thread, int NativeId)>(TaskCreationOptions.RunContinuationsAsynchronously);
        probe.OnReceive = (_, _, _, _, _) => receiver.TrySetResult((Thread.CurrentThread, NativeThread.CurrentId()));
        try
        {
            Assert.True(client ? ((UdpClient)peer).Connect() : ((UdpServer)peer).Start());
            if (state == Waiting.ForAWish)
                peer.ReceiveAsync();
            var local = (IPEndPoint)peer.Socket!.LocalEndPoint!;
            other.Send(new IPEndPoint(IPAddress.Loopback, local.Port), "who receives?");
            var (thread, nativeId) = await receiver.Task.WaitAsync(Wait.Default);

            // Wait until the thread is where this case says: the receive call holds the buffer, a
            // thread waiting for a wish has given it back; where the system shows it, the very call.
            await Wait.UntilAsync(() => pool.Outstanding == (state == Waiting.InReceive ? 1 : 0), "the receive buffer to be held only by a receive");
            await Wait.UntilAsync(() => NativeThread.IsIn(nativeId, state) != false, $"the receive thread to wait {state}");

            var watch = Stopwatch.StartNew();
            var closed = await HarnessExtensions.RunBlocking(() => client ? ((UdpClient)peer).Disconnect() : ((UdpServer)peer).Stop()).WaitAsync(Wait.Default);
            var took = watch.Elapsed;
            Assert.True(closed);
            Assert.True(took < s_prompt, $"Closing while the receive thread waits {state} took {took}.");
            Assert.True(await HarnessExtensions.RunBlocking(() => thread.Join(Wait.Default)).WaitAsync(Wait.Default), "the receive thread outlived its socket");
            Assert.Equal(
                client ? new[] { "connecting", "connected", "disconnecting", "disconnected" } : new[] { "starting", "started", "stopping", "stopped" },
                probe.Events);
            Assert.Null(probe.LateHook);
            probe.AssertNoErrors();
        }
        finally
        {
            await peer.DisposeAsync();
        }

        await pool.AssertAllReturnedAsync();
    }

    [Fact]
    public async Task The_mode_is_fixed_for_a_sockets_life_and_a_change_applies_at_the_next_Start()
    {
        var pool = new LeakCheckingBufferPool();
        var hooks = new ConcurrentQueue<Thread>();
        using var peer = new RawUdp(IPAddress.Loopback);
        await using (var server = new ProbeUdpServer(UdpTest.Loopback(AddressFamily.InterNetwork), pool) { Io = UdpIo.Async })
        {
            server.Probe.KeepReceiving();
            server.Probe.OnReceive = (self, _, _, _, _) =>
            {
                hooks.Enqueue(Thread.CurrentThread);
                self.ReceiveAsync();
            };

            async Task<Thread[]> ReceiveAsync(int count)
            {
                hooks.Clear();
                for (var i = 0; i < count; i++)
                    peer.Send(server.Endpoint, "x");
                await Wait.UntilAsync(() => hooks.Count == count, $"{count} datagrams");
                return hooks.Distinct().ToArray();
            }

            Assert.True(server.Start());
            server.OptionDedicatedThread = true; // too late for this socket
            var onLoop = UdpTest.OnLoop(server); // NETSERVER_TRANSPORT=loops: the default mode's socket is polled by a loop
            Assert.All(await ReceiveAsync(20), thread => Assert.Equal(!onLoop, thread.IsThreadPoolThread));

            server.Probe.Rearm();
            Assert.True(server.Restart());
            var dedicated = Assert.Single(await ReceiveAsync(20));
            Assert.False(dedicated.IsThreadPoolThread);

            server.OptionDedicatedThread = false; // too late again: the thread stays until Stop
            Assert.Same(dedicated, Assert.Single(await ReceiveAsync(20)));
            server.Probe.Rearm();
            Assert.True(server.Restart());
            Assert.True(await HarnessExtensions.RunBlocking(() => dedicated.Join(Wait.Default)).WaitAsync(Wait.Default), "the receive thread outlived its socket");
            onLoop = UdpTest.OnLoop(server);
            Assert.All(await ReceiveAsync(20), thread => Assert.Equal(!onLoop, thread.IsThreadPoolThread));
            server.Probe.AssertNoErrors();
        }

        await pool.AssertAllReturnedAsync();
    }

    [Fact]
    public async Task The_blocking_Receive_throws_InvalidOperationException_for_as_long_as_the_thread_runs()
    {
        var pool = new LeakCheckingBufferPool();
        using var peer = new RawUdp(IPAddress.Loopback);
        await using (var server = new ProbeUdpServer(UdpTest.Loopback(AddressFamily.InterNetwork), pool) { Io = UdpIo.DedicatedThread })
        {
            Assert.True(server.Start());
            server.Socket!.ReceiveTimeout = (int)Wait.Default.TotalMilliseconds;

            // No thread until someone asks for a datagram: the blocking Receive works meanwhile.
            peer.Send(server.Endpoint, "blocking");
            var buffer = new byte[100];
            var received = await HarnessExtensions.RunBlocking(() =>
            {
                EndPoint from = new IPEndPoint(IPAddress.Loopback, 0);
                return server.Receive(ref from, buffer);
            }).WaitAsync(Wait.Default);
            Assert.Equal("blocking", System.Text.Encoding.UTF8.GetString(buffer, 0, (int)received));

            // One ReceiveAsync starts the thread, which stays after its datagram came.
            server.ReceiveAsync();
            peer.Send(server.Endpoint, "asked");
            await Wait.UntilAsync(() => server.Probe.ReceivedCount == 2, "the datagram asked for");
            await Wait.UntilAsync(() => pool.Outstanding == 0, "the thread to wait for the next wish");
            peer.Send(server.Endpoint, "waiting");
            await Wait.UntilAsync(() => server.Socket.Available > 0, "the next datagram to reach the socket");
            EndPoint any = new IPEndPoint(IPAddress.Loopback, 0);
            Assert.Throws<InvalidOperationException>(() => server.Receive(ref any, buffer));
            Assert.Throws<InvalidOperationException>(() => server.Receive(ref any, buffer, 0, 10));
            Assert.Throws<InvalidOperationException>(() => server.Receive(ref any, 10));

            // The refused calls took nothing: the waiting datagram is the next one delivered.
            Assert.Equal(2, server.Probe.ReceivedCount);
            server.ReceiveAsync();
            await Wait.UntilAsync(() => server.Probe.ReceivedCount == 3, "the waiting datagram");
            Assert.Equal(new[] { "blocking", "asked", "waiting" }, server.Probe.Texts());
            Assert.Throws<InvalidOperationException>(() => server.Receive(ref any, buffer));
            Assert.Equal(3, server.DatagramsReceived);
            server.Probe.AssertNoErrors();
        }

        await pool.AssertAllReturnedAsync();
    }

    [Fact]
    public async Task With_nothing_queued_a_send_is_one_blocking_call_from_the_callers_bytes()
    {
        const int count = 50;
        var pool = new LeakCheckingBufferPool();
        using var receiver = new RawUdp(IPAddress.Loopback);
        await using (var server = new ProbeUdpServer(UdpTest.Loopback(AddressFamily.InterNetwork), pool) { Io = UdpIo.DedicatedThread })
        await using (var client = new ProbeUdpClient(receiver.Endpoint, pool) { Io = UdpIo.DedicatedThread })
        {
            Assert.True(server.Start());
            Assert.True(client.Connect());
            var buffer = new byte[20 + count];
            for (var i = 0; i < count; i++)
            {
                UdpTest.Datagram(i, 20 + i).CopyTo(buffer, 0);
                UdpPeer sender = i % 2 == 0 ? server : client;
                var accepted = (i % 4) switch
                {
                    0 => server.SendAsync(receiver.Endpoint, buffer, 0, 20 + i),
                    1 => client.SendAsync(buffer, 0, 20 + i),
                    2 => server.Send(receiver.Endpoint, buffer, 0, 20 + i) == 20 + i,
                    _ => await client.SendAsync(buffer.AsMemory(0, 20 + i)),
                };
                Assert.True(accepted);

                // The kernel has the datagram and OnSent has run before the call returned: the
                // caller's buffer is free at once, and nothing was counted as pending meanwhile.
                var probe = sender == server ? server.Probe : client.Probe;
                Assert.Equal((i / 2) + 1, probe.SentCount);
                Assert.Equal(20 + i, probe.SentSizes.Last());
                Assert.Equal(0, sender.BytesPending);
                Assert.Equal(0, sender.BytesSending);
                Array.Fill(buffer, (byte)0xEE);
            }

            var got = await receiver.ReceiveManyAsync(count);
            Assert.Equal(Enumerable.Range(0, count), got.Select(d => UdpTest.IdOf(d)).Order());
            Assert.All(got, d => Assert.Equal(20 + UdpTest.IdOf(d), d.Length));

            // No pooled copy was made for any of them.
            Assert.Equal(0, pool.Rents);
            server.Probe.AssertNoErrors();
            client.Probe.AssertNoErrors();
        }

        await pool.AssertAllReturnedAsync();
    }

    /// <summary>
    /// Where a native thread waits, as Linux shows it (/proc/self/task/ID/syscall), so a test can
    /// close a socket while its receive thread is really blocked in the receive call.
    /// </summary>
    private static class NativeThread
    {
        /// <summary>The calling thread's kernel id; 0 where it cannot be had.</summary>
        public static int CurrentId()
        {
            try
            {
                return OperatingSystem.IsLinux() ? GetTid() : 0;
            }
            catch (EntryPointNotFoundException)
            {
                return 0; // glibc before 2.30
            }
        }

        /// <summary>Whether thread <paramref name="id"/> waits where <paramref name="state"/> says; null where the system does not show it.</summary>
        public static bool? IsIn(int id, Waiting state)
        {
            if (id == 0 || Calls() is not { } calls)
                return null;
            string text;
            try
            {
                text = File.ReadAllText($"/proc/self/task/{id}/syscall");
            }
            catch (IOException)
            {
                return null;
            }
            catch (UnauthorizedAccessException)
            {
                return null;
            }

            // "running" or the number of the call it is blocked in, then its arguments.
            var first = text.Split(' ', 2)[0];
            if (!int.TryParse(first, out var number))
                return false;
            return state == Waiting.InReceive
                ? number == calls.RecvFrom || number == calls.RecvMsg
                : number == calls.Futex;
        }

        private static (int RecvFrom, int RecvMsg, int Futex)? Calls() => RuntimeInformation.ProcessArchitecture switch
        {
            Architecture.X64 => (45, 47, 202),
            Architecture.Arm64 => (207, 212, 98),
            _ => null,
        };

        [DllImport("libc.so.6", EntryPoint = "gettid")]
        private static extern int GetTid();
    }
}
