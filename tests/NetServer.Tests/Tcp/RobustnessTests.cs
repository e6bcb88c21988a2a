using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Tcp;

/// <summary>
/// The engine under stress on real sockets: a peer that resets in the middle of a large send, a
/// half-closed peer that must still get everything it is owed, a Stop with a thousand clients,
/// and ten thousand concurrent connections held by a second process.
/// </summary>
public class RobustnessTests
{
    private static readonly TimeSpan s_timeout = TimeSpan.FromSeconds(20);

    /// <summary>Every session echoes what it receives (queued send; the limit is the engine's default).</summary>
    private static void Echo(Probe probe) => probe.Received = static (c, buffer, offset, size) => c.SendAsync(buffer, offset, size);

    private static IEnumerable<string> Errors(Probe probe) => probe.Events.Where(static e => e.StartsWith("error:", StringComparison.Ordinal));

    /// <summary>Waits for the next session to connect and returns its id and probe.</summary>
    private static async Task<(Guid Id, Probe Probe)> NextSessionAsync(ServerHarness harness, List<Guid> known)
    {
        var expected = known.Count + 1;
        await harness.Probe.WaitForSessionsAsync(expected);
        var entry = harness.Probe.Sessions.Single(pair => !known.Contains(pair.Key));
        known.Add(entry.Key);
        return (entry.Key, entry.Value);
    }

    private static async Task AssertEchoesAsync(Socket socket, string text)
    {
        var message = Encoding.ASCII.GetBytes(text);
        await socket.SendAsync(message, SocketFlags.None).WaitAsync(s_timeout);
        var reply = await Wait.ReadExactlyAsync(socket, message.Length);
        Assert.Equal(text, Encoding.ASCII.GetString(reply));
    }

    // --- Graceful disconnect while the peer is still sending ---

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Disconnect_while_the_peer_keeps_sending_still_delivers_every_queued_byte(TransportKind kind)
    {
        // The session queues 4 MiB and disconnects at once, while the peer is still sending to it.
        // Closing with the peer's bytes unread would make the kernel reset the connection and throw
        // away what the peer has not read yet; the graceful close must read (and discard) them until
        // the peer ends its side, so every queued byte arrives.
        await using var harness = new ServerHarness(kind);
        var payload = Framing.Pattern(0, 4 * 1024 * 1024);
        harness.Probe.ConfigureSession = probe => probe.Connected = session =>
        {
            // The close must end by draining, not by the linger bound (5 s), even on a loaded machine.
            session.OptionDisconnectTimeout = Wait.Default;
            Assert.True(session.SendAsync(payload));
            Assert.True(session.Disconnect()); // inside a hook: starts the graceful close and returns
        };
        Assert.True(harness.Start());

        using var peer = await harness.ConnectRawAsync();
        using var stop = new CancellationTokenSource();
        // Keep talking until the server's end of stream has been read.
        var chatter = Chatter.SendUntilStoppedAsync(peer, 16 * 1024, stop.Token);

        var received = await Wait.ReadToEndAsync(peer, s_timeout);
        await stop.CancelAsync();
        peer.Shutdown(SocketShutdown.Both);
        await chatter.WaitAsync(s_timeout);

        Assert.Equal(payload.Length, received.Length);
        Assert.Equal(payload, received);
        var probe = harness.Probe.Sessions.Values.Single();
        Assert.Equal(DisconnectReason.LocalDisconnect, await probe.DisconnectedSignal.Task.WaitAsync(s_timeout));
    }

    // --- 1. Peer reset in the middle of a send ---

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Peer_reset_during_a_large_send_ends_the_session_once_as_a_reset(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        harness.Probe.ConfigureSession = Echo;
        Assert.True(harness.Start());

        var known = new List<Guid>();
        var victimSocket = await harness.ConnectRawAsync();
        var (victimId, victim) = await NextSessionAsync(harness, known);
        using var bystanderSocket = await harness.ConnectRawAsync();
        var (_, bystander) = await NextSessionAsync(harness, known);
        var session = harness.FindSession(victimId)!;

        // Flood the victim, which never reads: the awaitable send keeps the queue at its limit
        // while an asynchronous socket send waits for a kernel buffer that never drains.
        var chunk = new ReadOnlyMemory<byte>(new byte[256 * 1024]);
        using var floodLimit = new CancellationTokenSource(TimeSpan.FromSeconds(60));
        var flood = Task.Run(async () =>
        {
            var accepted = 0;
            while (await session.SendAsync(chunk, floodLimit.Token))
                accepted++;
            return accepted;
        });
        await Wait.UntilAsync(() => session.BytesSending > 0 && session.BytesPending >= 2 * 1024 * 1024, "the victim's queue to back up behind an async send");

        // A blocking sender queued behind the backlog: it can only return 0 once the peer is gone.
        var blocking = Task.Run(() => session.Send(new byte[64 * 1024]));

        victimSocket.LingerState = new LingerOption(true, 0);
        victimSocket.Close();

        var reason = await victim.DisconnectedSignal.Task.WaitAsync(s_timeout);
        // A reset is reported once by the OS: when the flusher's failed send consumes it, the receive
        // loop can read end-of-stream next and record PeerClosed first. Either is a correct account;
        // SocketError is not (it promises an OnError, and a reset is an ordinary disconnect).
        Assert.Contains(reason, new[] { DisconnectReason.ConnectionReset, DisconnectReason.PeerClosed });
        Assert.True(await flood.WaitAsync(s_timeout) > 0);
        Assert.Equal(0, await blocking.WaitAsync(s_timeout));
        Assert.Empty(Errors(victim));
        Assert.False(session.IsConnected);
        Assert.Equal(0, session.BytesPending);

        // The server and the other session are unaffected.
        await AssertEchoesAsync(bystanderSocket, "still here");
        await Wait.UntilAsync(() => harness.ConnectedSessions == 1, "the server to forget the reset session");
        await Wait.UntilAsync(() => harness.BytesPending == 0, "the server's pending bytes to return to 0 (the victim's dropped queue included)");
        Assert.Equal(1, victim.DisconnectedCount);
        Assert.Equal("disconnected", victim.Events.Last());
        Assert.Equal(0, bystander.DisconnectedCount);
        Assert.Empty(Errors(bystander));
        Assert.DoesNotContain(harness.Probe.Events, static e => e.StartsWith("error:", StringComparison.Ordinal));
    }

    // --- 2. Half-close: the engine flushes what it owes before closing ---

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Half_closed_peer_receives_every_echoed_byte_then_EOF(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        harness.Probe.ConfigureSession = Echo;
        Assert.True(harness.Start());

        using var socket = await harness.ConnectRawAsync();
        var (_, probe) = await NextSessionAsync(harness, new List<Guid>());
        var payload = new byte[10_000];
        new Random(2).NextBytes(payload);
        await socket.SendAsync(payload, SocketFlags.None).WaitAsync(s_timeout);
        socket.Shutdown(SocketShutdown.Send);

        var echoed = await Wait.ReadToEndAsync(socket);
        Assert.Equal(payload.Length, echoed.Length);
        Assert.True(payload.AsSpan().SequenceEqual(echoed));
        Assert.Equal(DisconnectReason.PeerClosed, await probe.DisconnectedSignal.Task.WaitAsync(s_timeout));
        Assert.Equal(1, probe.DisconnectedCount);
        Assert.Empty(Errors(probe));
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Half_closed_peer_with_a_backed_up_echo_queue_receives_every_byte_then_EOF(TransportKind kind)
    {
        const int Size = 16 * 1024 * 1024;
        await using var harness = new ServerHarness(kind);
        harness.Probe.ConfigureSession = probe =>
        {
            // No send limit and no high-water mark (receiving never pauses for the backlog): the
            // whole echo waits in the queue while the peer does not read.
            probe.Connected = static c =>
            {
                c.OptionSendBufferLimit = 0;
                c.OptionSendHighWaterMark = 0;
            };
            Echo(probe);
        };
        Assert.True(harness.Start());

        using var socket = await harness.ConnectRawAsync();
        var (id, probe) = await NextSessionAsync(harness, new List<Guid>());
        var session = harness.FindSession(id)!;
        var payload = new byte[Size];
        new Random(3).NextBytes(payload);
        using (var cts = new CancellationTokenSource(s_timeout))
        {
            for (var sent = 0; sent < payload.Length;)
                sent += await socket.SendAsync(payload.AsMemory(sent), SocketFlags.None, cts.Token);
        }

        socket.Shutdown(SocketShutdown.Send);

        // The FIN reaches the session while megabytes of its echo are still queued.
        await Wait.UntilAsync(() => probe.Events.Contains("disconnecting"), "the session to see the FIN");
        Assert.True(session.BytesPending > 0, "The echo queue was expected to be backed up when the FIN arrived.");
        Assert.Equal(0, probe.DisconnectedCount);

        var echoed = await Wait.ReadToEndAsync(socket, TimeSpan.FromSeconds(30));
        Assert.Equal(payload.Length, echoed.Length);
        Assert.True(payload.AsSpan().SequenceEqual(echoed), "The echoed bytes differ from the bytes sent.");
        Assert.Equal(DisconnectReason.PeerClosed, await probe.DisconnectedSignal.Task.WaitAsync(s_timeout));
        Assert.Equal(1, probe.DisconnectedCount);
        Assert.Equal(Size, session.BytesSent);
        Assert.Empty(Errors(probe));
    }

    // --- 3. Stop with a thousand connected clients ---

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Stop_with_1000_connected_clients_disconnects_every_session_once(TransportKind kind)
    {
        const int Count = 1000;
        await using var harness = new ServerHarness(kind);
        Assert.True(harness.Start());

        var probes = new Probe[Count];
        var clients = new StreamClient[Count];
        try
        {
            using (var cts = new CancellationTokenSource(TimeSpan.FromSeconds(60)))
            {
                for (var start = 0; start < Count; start += 100)
                {
                    var connects = new List<Task<bool>>();
                    for (var i = start; i < start + 100; i++)
                    {
                        probes[i] = new Probe();
                        clients[i] = harness.CreateClient(probes[i]);
                        connects.Add(clients[i].ConnectAsync(cts.Token));
                    }

                    Assert.All(await Task.WhenAll(connects), static connected => Assert.True(connected));
                }
            }

            await Wait.UntilAsync(() => harness.ConnectedSessions == Count, "every client to have a session", TimeSpan.FromSeconds(30));
            await harness.Probe.WaitForSessionsAsync(Count);

            var watch = Stopwatch.StartNew();
            Assert.True(await Task.Run(harness.Stop).WaitAsync(TimeSpan.FromSeconds(30)));
            watch.Stop();

            // Stop returns after every session's OnDisconnected, and then raises OnStopped.
            Assert.Equal(0, harness.ConnectedSessions);
            Assert.Equal(Count, harness.Probe.Sessions.Count);
            Assert.All(harness.Probe.Sessions.Values, static p => Assert.Equal(1, p.DisconnectedCount));
            Assert.Equal(Count, harness.Probe.Events.Count(static e => e == "disconnected"));
            var sessionReasons = await Task.WhenAll(harness.Probe.Sessions.Values.Select(static p => p.DisconnectedSignal.Task)).WaitAsync(s_timeout);
            Assert.All(sessionReasons, static r => Assert.Equal(DisconnectReason.ServerStopped, r));
            Assert.Equal("stopped", harness.Probe.Events.Last());
            Assert.True(watch.Elapsed < TimeSpan.FromSeconds(20), $"Stop took {watch.Elapsed}.");

            // Every client sees the close, once.
            var clientReasons = await Task.WhenAll(probes.Select(static p => p.DisconnectedSignal.Task)).WaitAsync(s_timeout);
            Assert.All(clientReasons, static r => Assert.Contains(r, new[] { DisconnectReason.PeerClosed, DisconnectReason.ConnectionReset }));
            Assert.All(probes, static p =>
            {
                Assert.Equal(1, p.DisconnectedCount);
                Assert.Empty(Errors(p));
            });
            Assert.All(clients, static c => Assert.False(c.IsConnected));
        }
        finally
        {
            foreach (var client in clients)
                client?.Dispose();
        }
    }

    // --- 5. Ten thousand concurrent connections from a second process ---

    [Fact]
    public async Task Ten_thousand_concurrent_connections_echo_and_stop_cleanly()
    {
        const int Count = 10_000;
        const int EchoEvery = 100;
        await using var harness = new ServerHarness(TransportKind.Tcp);
        harness.Probe.ConfigureSession = Echo;
        harness.Tcp!.OptionAcceptorBacklog = 4096;
        Assert.True(harness.Start());

        // The second-process load client (tests/NetServer.Tests.LoadClient), driven by its stdout lines;
        // it exits on its own after --lifetime seconds, so it never outlives the test.
        await using var child = ProgramProcess.Start(
            "NetServer.Tests.LoadClient",
            TimeSpan.FromSeconds(60),
            IPAddress.Loopback.ToString(),
            harness.Tcp.Port.ToString(CultureInfo.InvariantCulture),
            Count.ToString(CultureInfo.InvariantCulture),
            "--echo",
            EchoEvery.ToString(CultureInfo.InvariantCulture),
            "--lifetime",
            "110");

        await child.WaitForLineAsync("CONNECTED");
        await Wait.UntilAsync(() => harness.ConnectedSessions == Count, $"{Count} sessions", TimeSpan.FromSeconds(60));
        Assert.Equal($"ECHOED {Count / EchoEvery}", await child.WaitForLineAsync("ECHOED"));
        Assert.Equal(Count / EchoEvery, harness.Probe.Sessions.Values.Count(static p => p.ReceivedBytes > 0));

        Assert.True(await Task.Run(harness.Stop).WaitAsync(TimeSpan.FromSeconds(60)));
        Assert.Equal(0, harness.ConnectedSessions);
        Assert.Equal(Count, harness.Probe.Sessions.Count);
        Assert.Equal(Count, harness.Probe.Events.Count(static e => e == "disconnected"));
        Assert.All(harness.Probe.Sessions.Values, static p => Assert.Equal(1, p.DisconnectedCount));
        Assert.DoesNotContain(harness.Probe.Events, static e => e.StartsWith("error:", StringComparison.Ordinal));

        // The client process sees every socket closed by the server and exits on its own.
        Assert.Equal($"CLOSED {Count}", await child.WaitForLineAsync("CLOSED"));
        Assert.Equal(0, await child.WaitForExitAsync());
    }
}
