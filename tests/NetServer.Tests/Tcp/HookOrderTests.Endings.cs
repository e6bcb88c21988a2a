using System;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Tcp;

/// <summary>OnDisconnected comes once and last, whichever way a session's or a client's connection ends.</summary>
public partial class HookOrderTests
{
    /// <summary>Ways a connection can end.</summary>
    public enum Ending
    {
        PeerClose,
        PeerReset,
        LocalDisconnect,
        ServerStop,
        Dispose,
        HandlerThrows,
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public Task Session_peer_close_gives_one_last_OnDisconnected_PeerClosed(TransportKind kind) =>
        SessionEndingAsync(kind, Ending.PeerClose, DisconnectReason.PeerClosed);

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public Task Session_peer_reset_gives_one_last_OnDisconnected_ConnectionReset(TransportKind kind) =>
        SessionEndingAsync(kind, Ending.PeerReset, DisconnectReason.ConnectionReset);

    [Theory]
    // Plain only: through the test TLS relay a reset racing a blocked send sometimes arrives as an end of stream.
    [MemberData(nameof(Transports.Plain), MemberType = typeof(Transports))]
    public async Task Session_peer_reset_while_the_session_is_sending_gives_ConnectionReset(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        RecordServerHooks(harness);
        var chunk = new byte[16 * 1024];
        harness.Probe.ConfigureSession = probe =>
        {
            RecordClientHooks(probe);

            // Keep sending for as long as the connection lasts: every drained queue asks for more.
            probe.Empty = session =>
            {
                probe.Events.Enqueue("empty");
                session.SendAsync(chunk);
            };
        };
        Assert.True(harness.Start());

        // Which of the receive loop and the flusher notices the reset first varies: try it a number of times.
        for (var round = 0; round < 20; round++)
        {
            var (peer, session, probe) = await harness.ConnectPeerAsync();
            using (peer)
            {
                // Read a little so the flow is live, then reset with unread bytes pending.
                await Wait.ReadExactlyAsync(peer, 100_000);
                peer.LingerState = new LingerOption(true, 0);
                peer.Close();

                var reason = await probe.DisconnectedSignal.Task.WaitAsync(Wait.Default);
                var events = await SettledEventsAsync(probe, "server-disconnected");
                Assert.True(reason == DisconnectReason.ConnectionReset, $"Round {round}: a reset ended the session with {reason}, errors: {string.Join(",", events.Where(e => e.StartsWith("error:", StringComparison.Ordinal)))}.");
                Assert.Equal(reason, session.DisconnectReason);
                AssertDisconnectedOnceAndLast(events, server: true);
            }
        }
    }

    [Theory]
    [MemberData(nameof(Transports.Plain), MemberType = typeof(Transports))]
    public async Task Session_peer_that_ends_its_side_then_resets_while_replies_are_owed_gives_ConnectionReset(TransportKind kind)
    {
        // The end of stream starts a graceful PeerClosed close that still owes the peer a large
        // reply; the reset that follows loses it, so the reason must say reset. (The kernel hands a
        // reset's error to one call only, so this is also what happens when a reset is first seen
        // by the sender and the receive loop then reads a plain end of stream.)
        await using var harness = new ServerHarness(kind);
        RecordServerHooks(harness);
        var reply = new byte[32 * 1024 * 1024];
        harness.Probe.ConfigureSession = probe =>
        {
            RecordClientHooks(probe);
            probe.Connected = session =>
            {
                // The session must go on reading to see the end of stream while the reply waits.
                session.OptionSendHighWaterMark = 0;
                Assert.True(session.SendAsync(reply));
            };
        };
        Assert.True(harness.Start());

        var (peer, session, probe) = await harness.ConnectPeerAsync();
        using (peer)
        {
            await Wait.UntilAsync(() => session.BytesPending > 0, "the reply to fill the kernel buffers");
            peer.Shutdown(SocketShutdown.Send);
            await Wait.UntilAsync(() => probe.Events.Contains("disconnecting"), "the session to start its graceful close");
            Assert.True(session.BytesPending > 0, "The reply was all sent although the peer read none of it.");
            Assert.Equal(0, probe.DisconnectedCount);

            if (kind == TransportKind.Tcp)
                peer.LingerState = new LingerOption(true, 0);
            peer.Close();

            Assert.Equal(DisconnectReason.ConnectionReset, await probe.DisconnectedSignal.Task.WaitAsync(Wait.Default));
            Assert.Equal(DisconnectReason.ConnectionReset, session.DisconnectReason);
            AssertDisconnectedOnceAndLast(await SettledEventsAsync(probe, "server-disconnected"), server: true);
        }
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public Task Session_Disconnect_gives_one_last_OnDisconnected_LocalDisconnect(TransportKind kind) =>
        SessionEndingAsync(kind, Ending.LocalDisconnect, DisconnectReason.LocalDisconnect);

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public Task Session_server_Stop_gives_one_last_OnDisconnected_ServerStopped(TransportKind kind) =>
        SessionEndingAsync(kind, Ending.ServerStop, DisconnectReason.ServerStopped);

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public Task Session_Dispose_gives_one_last_OnDisconnected_Disposed(TransportKind kind) =>
        SessionEndingAsync(kind, Ending.Dispose, DisconnectReason.Disposed);

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public Task Session_OnReceived_that_throws_gives_one_last_OnDisconnected_HandlerException(TransportKind kind) =>
        SessionEndingAsync(kind, Ending.HandlerThrows, DisconnectReason.HandlerException);

    // --- Client endings ---

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public Task Client_peer_close_gives_one_last_OnDisconnected_PeerClosed(TransportKind kind) =>
        ClientEndingAsync(kind, Ending.PeerClose, DisconnectReason.PeerClosed);

    [Theory]
    [MemberData(nameof(Transports.Plain), MemberType = typeof(Transports))]
    public async Task Client_peer_reset_gives_one_last_OnDisconnected_ConnectionReset(TransportKind kind)
    {
        // The server under test cannot reset on demand, so the client talks to a raw listener here.
        await using var harness = new ServerHarness(kind);
        using var listener = RawListener(harness, out var endpoint, out var path);

        var probe = new Probe();
        RecordClientHooks(probe);
        probe.Received = (_, _, _, _) => probe.Events.Enqueue("received-end");
        StreamClient client = kind == TransportKind.Tcp
            ? new ProbeTcpClient((IPEndPoint)endpoint, probe)
            : new ProbeUdsClient(path!, probe);
        client.BufferPool = harness.Pool;
        using (client)
        {
            var accepting = listener.AcceptAsync();
            Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(Wait.Default));
            using var peer = await accepting.WaitAsync(Wait.Default);

            // Some traffic both ways first, so there are hooks to order.
            peer.Send(Framing.Pattern(0, 500));
            await Wait.UntilAsync(() => probe.ReceivedBytes == 500, "the client to receive");
            Assert.True(client.SendAsync(Framing.Pattern(0, 300)));
            await Wait.UntilAsync(() => peer.Available >= 300, "the peer to have unread bytes");

            // Closing with unread bytes and a zero linger resets the connection (TCP: RST; UDS: ECONNRESET).
            peer.LingerState = new LingerOption(true, 0);
            peer.Close();

            Assert.Equal(DisconnectReason.ConnectionReset, await probe.DisconnectedSignal.Task.WaitAsync(Wait.Default));
            Assert.Equal(DisconnectReason.ConnectionReset, client.DisconnectReason);
            var events = await SettledEventsAsync(probe, "disconnected");
            AssertDisconnectedOnceAndLast(events, server: false);
            Assert.DoesNotContain(events, e => e.StartsWith("error:", StringComparison.Ordinal));
        }
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public Task Client_Disconnect_gives_one_last_OnDisconnected_LocalDisconnect(TransportKind kind) =>
        ClientEndingAsync(kind, Ending.LocalDisconnect, DisconnectReason.LocalDisconnect);

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public Task Client_server_Stop_gives_one_last_OnDisconnected_PeerClosed(TransportKind kind) =>
        ClientEndingAsync(kind, Ending.ServerStop, DisconnectReason.PeerClosed);

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public Task Client_Dispose_gives_one_last_OnDisconnected_Disposed(TransportKind kind) =>
        ClientEndingAsync(kind, Ending.Dispose, DisconnectReason.Disposed);

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public Task Client_OnReceived_that_throws_gives_one_last_OnDisconnected_HandlerException(TransportKind kind) =>
        ClientEndingAsync(kind, Ending.HandlerThrows, DisconnectReason.HandlerException);

    // --- Scenarios ---

    /// <summary>
    /// A raw peer talks to an echoing session; then, while the session sits inside a slow
    /// OnReceived, the connection is ended <paramref name="ending"/>. OnDisconnected must wait for
    /// that OnReceived, run once, carry <paramref name="expected"/>, and be followed only by the
    /// server's OnDisconnected(session).
    /// </summary>
    private static async Task SessionEndingAsync(TransportKind kind, Ending ending, DisconnectReason expected)
    {
        await using var harness = new ServerHarness(kind);
        RecordServerHooks(harness);
        using var gate = new ManualResetEventSlim(ending == Ending.HandlerThrows);
        var inside = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var armed = 0;
        var failure = new InvalidOperationException("OnReceived failed on purpose");
        harness.Probe.ConfigureSession = probe =>
        {
            RecordClientHooks(probe);
            probe.Received = (session, buffer, offset, size) =>
            {
                try
                {
                    if (Interlocked.Exchange(ref armed, 0) == 1)
                    {
                        inside.TrySetResult();
                        gate.Wait(s_gateLimit);
                        if (ending == Ending.HandlerThrows)
                            throw failure;
                    }

                    session.SendAsync(buffer, offset, size);
                }
                finally
                {
                    probe.Events.Enqueue("received-end");
                }
            };
        };
        Assert.True(harness.Start());

        var (peer, session, probe) = await harness.ConnectPeerAsync();
        using (peer)
        {
            // A round trip first: OnReceived, OnSent and OnEmpty all run before the end.
            var first = Framing.Pattern(0, 700);
            peer.Send(first);
            Assert.Equal(first, await Wait.ReadExactlyAsync(peer, first.Length));

            Task<bool>? closing = null;
            var second = Framing.Pattern(700, 300);
            switch (ending)
            {
                case Ending.PeerClose:
                    // Half-close: the session sees the end of the stream, still sends what it owes, then closes.
                    peer.Send(second);
                    peer.Shutdown(SocketShutdown.Send);
                    Assert.Equal(second, await Wait.ReadToEndAsync(peer));
                    break;

                case Ending.PeerReset:
                    // Leave the echo unread and close with a zero linger: TCP sends RST, a Unix socket reports ECONNRESET.
                    peer.Send(second);
                    await Wait.UntilAsync(() => peer.Available >= second.Length, "the echo to arrive unread");
                    peer.LingerState = new LingerOption(true, 0);
                    peer.Close();
                    break;

                default:
                    Volatile.Write(ref armed, 1);
                    peer.Send(second);
                    await inside.Task.WaitAsync(Wait.Default);
                    closing = ending switch
                    {
                        Ending.LocalDisconnect => HarnessExtensions.RunBlocking(session.Disconnect),
                        Ending.ServerStop => HarnessExtensions.RunBlocking(harness.Stop),
                        Ending.Dispose => HarnessExtensions.RunBlocking(() =>
                        {
                            session.Dispose();
                            return true;
                        }),
                        _ => null,
                    };

                    if (closing is not null)
                    {
                        // OnReceived is still running: OnDisconnected must not overtake it, and the blocking call must wait.
                        await Task.Delay(200);
                        Assert.Equal(0, probe.DisconnectedCount);
                        Assert.False(closing.IsCompleted, "The blocking close returned while OnReceived was still running.");
                        gate.Set();
                        Assert.True(await closing.WaitAsync(Wait.Default));
                        Assert.Equal(1, probe.DisconnectedCount);
                    }

                    break;
            }

            Assert.Equal(expected, await probe.DisconnectedSignal.Task.WaitAsync(Wait.Default));
            Assert.Equal(expected, session.DisconnectReason);
            if (ending == Ending.HandlerThrows)
                Assert.Same(failure, session.DisconnectException);
            else
                Assert.Null(session.DisconnectException);

            var events = await SettledEventsAsync(probe, "server-disconnected");
            AssertDisconnectedOnceAndLast(events, server: true);
            Assert.Contains("sent", events);
            Assert.Contains("empty", events);
            Assert.DoesNotContain(events, e => e.StartsWith("error:", StringComparison.Ordinal));
            Assert.False(session.IsConnected);
            Assert.Null(harness.FindSession(session.Id));
        }
    }

    /// <summary>The same as <see cref="SessionEndingAsync"/> for a NetServer client whose peer is an echoing session.</summary>
    private static async Task ClientEndingAsync(TransportKind kind, Ending ending, DisconnectReason expected)
    {
        await using var harness = new ServerHarness(kind);
        harness.Probe.ConfigureSession = probe => probe.Received = (session, buffer, offset, size) => session.SendAsync(buffer, offset, size);
        Assert.True(harness.Start());

        using var gate = new ManualResetEventSlim(ending == Ending.HandlerThrows);
        var inside = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var armed = 0;
        var failure = new InvalidOperationException("OnReceived failed on purpose");
        var probe = new Probe();
        RecordClientHooks(probe);
        probe.Received = (_, _, _, _) =>
        {
            try
            {
                if (Interlocked.Exchange(ref armed, 0) == 1)
                {
                    inside.TrySetResult();
                    gate.Wait(s_gateLimit);
                    if (ending == Ending.HandlerThrows)
                        throw failure;
                }
            }
            finally
            {
                probe.Events.Enqueue("received-end");
            }
        };

        var client = harness.CreateClient(probe);
        try
        {
            Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(Wait.Default));
            await harness.Probe.WaitForSessionsAsync(1);
            var session = harness.FindSession(harness.Probe.Sessions.Keys.Single())!;

            // A round trip first, so OnSent, OnEmpty and OnReceived have all run.
            Assert.True(client.SendAsync(Framing.Pattern(0, 700)));
            await Wait.UntilAsync(() => probe.ReceivedBytes == 700, "the echo");

            // The server sends once more and the client sits in OnReceived while the connection ends.
            Volatile.Write(ref armed, 1);
            Assert.True(session.SendAsync(Framing.Pattern(700, 300)));
            await inside.Task.WaitAsync(Wait.Default);
            var closing = ending switch
            {
                Ending.PeerClose => HarnessExtensions.RunBlocking(session.Disconnect),
                Ending.LocalDisconnect => HarnessExtensions.RunBlocking(client.Disconnect),
                Ending.ServerStop => HarnessExtensions.RunBlocking(harness.Stop),
                Ending.Dispose => HarnessExtensions.RunBlocking(() =>
                {
                    client.Dispose();
                    return true;
                }),
                _ => null,
            };

            if (closing is not null)
            {
                await Task.Delay(200);
                Assert.Equal(0, probe.DisconnectedCount);
                if (ending is Ending.LocalDisconnect or Ending.Dispose)
                    Assert.False(closing.IsCompleted, "The blocking close returned while OnReceived was still running.");
                gate.Set();
                Assert.True(await closing.WaitAsync(Wait.Default));
            }

            Assert.Equal(expected, await probe.DisconnectedSignal.Task.WaitAsync(Wait.Default));
            Assert.Equal(expected, client.DisconnectReason);
            if (ending == Ending.HandlerThrows)
                Assert.Same(failure, client.DisconnectException);
            else
                Assert.Null(client.DisconnectException);

            var events = await SettledEventsAsync(probe, "disconnected");
            AssertDisconnectedOnceAndLast(events, server: false);
            Assert.Contains("sent", events);
            Assert.Contains("empty", events);
            Assert.DoesNotContain(events, e => e.StartsWith("error:", StringComparison.Ordinal));
            Assert.False(client.IsConnected);
        }
        finally
        {
            gate.Set();
            client.Dispose();
        }
    }
}
