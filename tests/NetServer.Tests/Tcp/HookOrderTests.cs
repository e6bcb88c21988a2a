using System;
using System.IO;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Tcp;

/// <summary>
/// OnConnecting and OnConnected come before any OnReceived; OnDisconnected comes exactly once and
/// after every other hook, whichever way the connection ends; the server's hooks wrap the session's.
/// </summary>
public partial class HookOrderTests
{
    private static readonly TimeSpan s_slowHook = TimeSpan.FromMilliseconds(200);
    private static readonly TimeSpan s_gateLimit = TimeSpan.FromSeconds(10);

    // --- Connect order ---

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Session_OnConnected_runs_before_OnReceived_when_the_peer_sends_at_once(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        RecordServerHooks(harness);
        harness.Probe.ConfigureSession = probe =>
        {
            probe.Empty = _ => probe.Events.Enqueue("empty");
            probe.Connected = _ =>
            {
                // A slow OnConnected: the bytes the peer already sent must wait for it.
                using var never = new ManualResetEventSlim();
                never.Wait(s_slowHook);
                probe.Events.Enqueue("connected-end");
            };
        };
        Assert.True(harness.Start());

        var data = Framing.Pattern(0, 1000);
        using var peer = await harness.ConnectRawAsync();
        peer.Send(data);

        await harness.Probe.WaitForSessionsAsync(1);
        var probe = harness.Probe.Sessions.Values.Single();
        await Wait.UntilAsync(() => probe.ReceivedBytes == data.Length, "the session to receive the bytes");

        var events = probe.Events.ToArray();
        var firstReceived = Array.IndexOf(events, "received");
        Assert.True(firstReceived >= 0, string.Join(",", events));
        Assert.Equal(new[] { "connecting", "connected", "connected-end", "server-connected" }, events[..4]);
        Assert.True(firstReceived > 3, "OnReceived ran before the connect hooks returned: " + string.Join(",", events));
        Assert.DoesNotContain("received", events[..firstReceived]);
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Client_OnConnected_runs_before_OnReceived_when_the_server_sends_at_once(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        var data = Framing.Pattern(0, 1000);
        harness.Probe.ConfigureSession = probe => probe.Connected = session => Assert.True(session.SendAsync(data));
        Assert.True(harness.Start());

        var probe = new Probe();
        var received = new MemoryStream();
        probe.Connected = _ =>
        {
            using var never = new ManualResetEventSlim();
            never.Wait(s_slowHook);
            probe.Events.Enqueue("connected-end");
        };
        probe.Received = (_, buffer, offset, size) =>
        {
            lock (received)
                received.Write(buffer, (int)offset, (int)size);
        };

        using var client = harness.CreateClient(probe);
        Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(Wait.Default));
        await Wait.UntilAsync(
            () =>
            {
                lock (received)
                    return received.Length == data.Length;
            },
            "the client to receive the bytes");
        lock (received)
            Assert.Equal(data, received.ToArray());

        Assert.True(client.Disconnect());
        Assert.Equal(DisconnectReason.LocalDisconnect, await probe.DisconnectedSignal.Task.WaitAsync(Wait.Default));
        var events = probe.Events.ToArray();
        var firstReceived = Array.IndexOf(events, "received");
        Assert.Equal(new[] { "connecting", "connected", "connected-end" }, events[..3]);
        Assert.True(firstReceived >= 3, "OnReceived ran before the connect hooks returned: " + string.Join(",", events));
        Assert.Equal("disconnected", events[^1]);
        Assert.Equal(1, probe.DisconnectedCount);
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Session_OnConnected_that_throws_ends_with_HandlerException_and_one_OnDisconnected(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        RecordServerHooks(harness);
        var failure = new InvalidOperationException("OnConnected failed on purpose");
        StreamConnection? failed = null;
        harness.Probe.ConfigureSession = probe => probe.Connected = session =>
        {
            failed = session;
            throw failure;
        };
        Assert.True(harness.Start());

        using var peer = await harness.ConnectRawAsync();
        try
        {
            peer.Send(Framing.Pattern(0, 100));
        }
        catch (SocketException e) when (e.SocketErrorCode is SocketError.Shutdown or SocketError.ConnectionReset)
        {
            // The session may already be gone: the bytes only give OnReceived a chance to run wrongly.
        }

        await Wait.UntilAsync(() => !harness.Probe.Sessions.IsEmpty, "the session to be created");
        var probe = harness.Probe.Sessions.Values.Single();
        Assert.Equal(DisconnectReason.HandlerException, await probe.DisconnectedSignal.Task.WaitAsync(Wait.Default));
        Assert.Same(failure, failed!.DisconnectException);

        // The peer sees the connection close (reset, on some transports, since its bytes were never read).
        try
        {
            Assert.Empty(await Wait.ReadToEndAsync(peer).WaitAsync(Wait.Default));
        }
        catch (SocketException e) when (e.SocketErrorCode == SocketError.ConnectionReset)
        {
        }

        var events = await SettledEventsAsync(probe, "server-disconnected");
        Assert.DoesNotContain("received", events);
        Assert.DoesNotContain("server-connected", events);
        AssertDisconnectedOnceAndLast(events, server: true);
        Assert.Equal(0, harness.ConnectedSessions);
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task A_refused_send_racing_a_close_never_raises_OnError_after_OnDisconnected(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        var late = 0;
        harness.Probe.ConfigureSession = probe => probe.Error = (_, _) =>
        {
            if (probe.DisconnectedCount != 0)
                Interlocked.Increment(ref late);
        };
        Assert.True(harness.Start());

        // The window is narrow (a refusal's OnError is raised after the send lock is released): try it a number of times.
        for (var round = 0; round < 6; round++)
        {
            var (peer, session, probe) = await harness.ConnectPeerAsync();
            using (peer)
            {
                session.OptionSendBufferLimit = 64 * 1024;
                HarnessExtensions.FillUntilRefused(session);

                // More threads than cores keep refusing sends (each raises OnError) while the session is disposed.
                var deadline = DateTime.UtcNow + Wait.Default;
                var refused = new byte[32 * 1024];
                var hammers = Enumerable.Range(0, 4 * Environment.ProcessorCount).Select(_ => HarnessExtensions.RunBlocking(() =>
                {
                    var calls = 0;
                    while (probe.DisconnectedCount == 0 && DateTime.UtcNow < deadline)
                    {
                        session.SendAsync(refused);
                        calls++;
                    }

                    return calls;
                })).ToArray();
                await Task.Delay(10);
                session.Dispose();
                Assert.Equal(DisconnectReason.Disposed, await probe.DisconnectedSignal.Task.WaitAsync(Wait.Default));

                // OnError runs inside the refused call, so once every hammer has returned, every late one has been counted.
                await Task.WhenAll(hammers).WaitAsync(Wait.Default);
                Assert.True(Volatile.Read(ref late) == 0, $"Round {round}: OnError ran {late} time(s) after OnDisconnected.");
                Assert.Equal(1, probe.DisconnectedCount);
            }
        }
    }

    // --- Helpers ---

    /// <summary>Records the server's per-session hooks in that session's event list.</summary>
    internal static void RecordServerHooks(ServerHarness harness)
    {
        harness.Probe.Connected = session => harness.Probe.Sessions[session.Id].Events.Enqueue("server-connected");
        harness.Probe.Disconnected = session => harness.Probe.Sessions[session.Id].Events.Enqueue("server-disconnected");
    }

    /// <summary>Records OnSent and OnEmpty too (the probe records the other hooks itself).</summary>
    internal static void RecordClientHooks(Probe probe)
    {
        probe.Sent = (_, _, _) => probe.Events.Enqueue("sent");
        probe.Empty = _ => probe.Events.Enqueue("empty");
    }

    /// <summary>Waits for the final event, then a little longer, so a hook that runs too late is caught too.</summary>
    internal static async Task<string[]> SettledEventsAsync(Probe probe, string final)
    {
        await Wait.UntilAsync(() => probe.Events.Contains(final), final);
        await Task.Delay(100);
        return probe.Events.ToArray();
    }

    private static void AssertDisconnectedOnceAndLast(string[] events, bool server)
    {
        var all = string.Join(",", events);
        Assert.True(events.Count(e => e == "disconnected") == 1, "OnDisconnected did not run exactly once: " + all);
        Assert.True(events.Count(e => e == "disconnecting") == 1, "OnDisconnecting did not run exactly once: " + all);
        var disconnected = Array.IndexOf(events, "disconnected");
        Assert.True(Array.IndexOf(events, "disconnecting") < disconnected, "OnDisconnecting ran after OnDisconnected: " + all);
        Assert.True(events.Count(e => e == "received") == events.Count(e => e == "received-end"), "An OnReceived never finished: " + all);
        Assert.True(Array.LastIndexOf(events, "received-end") < disconnected, "OnReceived ran after OnDisconnected: " + all);
        if (server)
        {
            Assert.True(events[^1] == "server-disconnected" && disconnected == events.Length - 2, "The server's OnDisconnected is not last, right after the session's: " + all);
            Assert.True(events.Count(e => e == "server-disconnected") == 1, "The server's OnDisconnected ran more than once: " + all);
        }
        else
        {
            Assert.True(disconnected == events.Length - 1, "A hook ran after OnDisconnected: " + all);
        }
    }

    /// <summary>A raw listening socket on a fresh endpoint of the harness's transport.</summary>
    private static Socket RawListener(ServerHarness harness, out EndPoint endpoint, out string? path)
    {
        Socket listener;
        path = null;
        if (harness.Kind == TransportKind.Tcp)
        {
            listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
            listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        }
        else
        {
            listener = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified);
            path = Path.Combine(Path.GetDirectoryName(harness.SocketPath)!, "raw.sock");
            listener.Bind(new UnixDomainSocketEndPoint(path));
        }

        listener.Listen(16);
        endpoint = listener.LocalEndPoint!;
        return listener;
    }
}
