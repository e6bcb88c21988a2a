using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
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
/// The client API on real sockets: synchronous and asynchronous connects, blocking receive,
/// disconnects, sends, host names, state flags, statistics, and reconnect loops (the
/// NetCoreServer chat-client pattern of reconnecting from OnDisconnected).
/// </summary>
public partial class ClientTests
{
    private static readonly TimeSpan s_timeout = TimeSpan.FromSeconds(15);

    [ThreadStatic]
    private static int t_disconnectedNesting;

    private static readonly string[] s_connectionEvents = ["connecting", "connected", "disconnecting", "disconnected"];
    private static readonly string[] s_failedAttemptEvents = ["connecting", "disconnected"];

    private static IEnumerable<string> Errors(Probe probe) => probe.Events.Where(static e => e.StartsWith("error:", StringComparison.Ordinal));

    private static void Echo(Probe probe) => probe.Received = static (c, buffer, offset, size) => c.SendAsync(buffer, offset, size);

    private static string[] Repeat(string[] events, int times) => Enumerable.Repeat(events, times).SelectMany(static e => e).ToArray();

    /// <summary>
    /// Checks that <paramref name="events"/> is a sequence of whole attempts, each
    /// <c>connecting</c> then either <c>connected, received*, error*, disconnecting?, disconnected</c>
    /// or <c>error*, disconnected</c>; returns how many attempts connected and how many failed.
    /// </summary>
    private static (int Connected, int Failed) AssertWholeAttempts(IEnumerable<string> events)
    {
        var list = events.ToList();
        var text = string.Join(",", list);
        int connected = 0, failed = 0, i = 0;
        string Next(string expected)
        {
            Assert.True(i < list.Count, $"Expected '{expected}' at {i}, got the end: {text}");
            return list[i];
        }

        while (i < list.Count)
        {
            Assert.True(Next("connecting") == "connecting", $"Expected 'connecting' at {i}: {text}");
            i++;
            var established = i < list.Count && list[i] == "connected";
            if (established)
                i++;
            while (i < list.Count && (list[i] == "received" || list[i].StartsWith("error:", StringComparison.Ordinal)))
                i++;
            if (established && i < list.Count && list[i] == "disconnecting")
                i++;
            Assert.True(Next("disconnected") == "disconnected", $"Expected 'disconnected' at {i}: {text}");
            i++;
            if (established)
                connected++;
            else
                failed++;
        }

        return (connected, failed);
    }

    /// <summary>Waits for the next session to connect and returns its id and probe.</summary>
    private static async Task<(Guid Id, Probe Probe)> NextSessionAsync(ServerHarness harness, List<Guid> known)
    {
        await harness.Probe.WaitForSessionsAsync(known.Count + 1);
        var entry = harness.Probe.Sessions.Single(pair => !known.Contains(pair.Key));
        known.Add(entry.Key);
        return (entry.Key, entry.Value);
    }

    private static async Task<StreamSession> OnlySessionAsync(ServerHarness harness)
    {
        await Wait.UntilAsync(() => harness.ConnectedSessions == 1, "one session");
        var id = harness.Probe.Sessions.Keys.Single(k => harness.FindSession(k) is not null);
        return harness.FindSession(id)!;
    }

    // --- Synchronous connect and blocking receive ---

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Sync_Connect_does_not_receive_by_itself_and_Receive_blocks_for_data(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        harness.Probe.ConfigureSession = static p => p.Connected = static c => c.SendAsync(Encoding.ASCII.GetBytes("hello"));
        Assert.True(harness.Start());
        var probe = new Probe();
        using var client = harness.CreateClient(probe);

        Assert.True(await Task.Run(client.Connect).WaitAsync(s_timeout));
        Assert.True(client.IsConnected);
        Assert.False(client.IsConnecting);
        Assert.Equal(["connecting", "connected"], probe.Events);
        var session = await OnlySessionAsync(harness);

        // No receive loop runs, so the blocking receive may be used; it also raises OnReceived.
        client.Socket!.ReceiveTimeout = 10_000;
        var buffer = new byte[16];
        var read = 0;
        while (read < 5)
        {
            var n = await Task.Run(() => client.Receive(buffer, read, buffer.Length - read)).WaitAsync(s_timeout);
            Assert.True(n > 0, "Receive returned 0 before the data arrived.");
            read += (int)n;
        }

        Assert.Equal("hello", Encoding.ASCII.GetString(buffer, 0, read));
        Assert.Equal(5, probe.ReceivedBytes);
        Assert.Equal(5, client.BytesReceived);

        Assert.True(session.SendAsync("abc"));
        Assert.Equal("abc", await Task.Run(() => client.Receive(3)).WaitAsync(s_timeout));

        // ReceiveTimeout bounds the wait: 0 bytes, still connected.
        client.Socket.ReceiveTimeout = 200;
        var watch = Stopwatch.StartNew();
        Assert.Equal(0, await Task.Run(() => client.Receive(buffer)).WaitAsync(s_timeout));
        Assert.True(watch.Elapsed >= TimeSpan.FromMilliseconds(150), $"Receive returned after {watch.Elapsed} instead of waiting for the timeout.");
        Assert.True(client.IsConnected);

        // Once the receive loop runs, the blocking receive would race it for the bytes.
        client.ReceiveAsync();
        Assert.Throws<InvalidOperationException>(() => client.Receive(buffer));
        Assert.True(session.SendAsync("world"));
        await Wait.UntilAsync(() => probe.ReceivedBytes == 13, "the receive loop to deliver 'world'");

        Assert.True(client.Disconnect());
        Assert.Equal(1, probe.DisconnectedCount);
        Assert.Equal(DisconnectReason.LocalDisconnect, await probe.DisconnectedSignal.Task);
        Assert.Empty(Errors(probe));
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task ConnectAsync_returns_true_once_and_starts_receiving(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        Assert.True(harness.Start());
        var probe = new Probe();
        using var client = harness.CreateClient(probe);

        Assert.True(client.ConnectAsync());
        Assert.False(client.ConnectAsync());
        await probe.ConnectedSignal.Task.WaitAsync(s_timeout);
        Assert.False(client.ConnectAsync());
        Assert.False(client.Connect());
        Assert.False(await client.ConnectAsync(CancellationToken.None));

        var session = await OnlySessionAsync(harness);
        Assert.True(session.SendAsync(new byte[] { 1, 2, 3 }));
        await Wait.UntilAsync(() => probe.ReceivedBytes == 3, "the client's receive loop to deliver the bytes");
        Assert.Equal(["connecting", "connected", "received"], probe.Events);
    }

    // --- Connect failures and cancellation ---

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Connect_to_a_closed_endpoint_fails_with_one_OnDisconnected_per_attempt_and_no_OnError(TransportKind kind)
    {
        using var closed = new ClosedEndpoint(kind);
        var probe = new Probe();
        using var client = closed.CreateClient(probe);

        var error = await Assert.ThrowsAsync<SocketException>(() => client.ConnectAsync(CancellationToken.None)).WaitAsync(s_timeout);
        Assert.Equal(SocketError.ConnectionRefused, error.SocketErrorCode);
        Assert.Equal(DisconnectReason.ConnectFailed, await probe.DisconnectedSignal.Task.WaitAsync(s_timeout));
        Assert.False(client.IsConnected);
        Assert.False(client.IsConnecting);
        Assert.Equal(DisconnectReason.ConnectFailed, client.DisconnectReason);

        Assert.False(await Task.Run(client.Connect).WaitAsync(s_timeout));
        Assert.Equal(2, probe.DisconnectedCount);

        for (var attempt = 3; attempt <= 5; attempt++)
        {
            Assert.True(client.ConnectAsync());
            var expected = attempt;
            await Wait.UntilAsync(() => probe.DisconnectedCount == expected, $"attempt {attempt} to end");
        }

        // ConnectionRefused is an ordinary disconnect: no OnError, exactly one OnDisconnected per attempt.
        await closed.Pool.AssertAllReturnedAsync();
        Assert.Equal(Repeat(s_failedAttemptEvents, 5), probe.Events);
        Assert.Equal(DisconnectReason.ConnectFailed, client.DisconnectReason);
    }

    [Fact]
    public async Task ConnectAsync_with_a_cancelled_token_throws_before_any_hook()
    {
        using var closed = new ClosedEndpoint(TransportKind.Tcp);
        var probe = new Probe();
        using var client = closed.CreateClient(probe);

        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => client.ConnectAsync(new CancellationToken(canceled: true)));
        Assert.Empty(probe.Events);
        Assert.False(client.IsConnecting);
    }

    [Fact]
    public async Task ConnectAsync_cancelled_while_the_handshake_is_unanswered_throws_OperationCanceledException()
    {
        // A listener with a full accept queue drops further SYNs, so a connect to it stays pending.
        using var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        listener.Listen(1);
        var endpoint = (IPEndPoint)listener.LocalEndPoint!;
        var fillers = new List<Socket>();
        try
        {
            var pending = new List<Task>();
            for (var i = 0; i < 4; i++)
            {
                var filler = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
                fillers.Add(filler);
                pending.Add(filler.ConnectAsync(endpoint));
            }

            await Task.WhenAny(pending).WaitAsync(s_timeout);

            var probe = new Probe();
            var pool = new LeakCheckingBufferPool();
            using var client = new ProbeTcpClient(endpoint, probe) { BufferPool = pool };
            using var cts = new CancellationTokenSource(TimeSpan.FromMilliseconds(300));
            await Assert.ThrowsAnyAsync<OperationCanceledException>(() => client.ConnectAsync(cts.Token)).WaitAsync(s_timeout);

            Assert.Equal(DisconnectReason.ConnectFailed, await probe.DisconnectedSignal.Task.WaitAsync(s_timeout));
            Assert.Equal(s_failedAttemptEvents, probe.Events);
            Assert.False(client.IsConnecting);
            Assert.False(client.IsConnected);
            await pool.AssertAllReturnedAsync();
        }
        finally
        {
            foreach (var filler in fillers)
                filler.Dispose();
        }
    }

    [Fact]
    public async Task ConnectAsync_is_true_for_a_connect_that_succeeded_however_fast_the_server_then_closes()
    {
        // A server that greets and closes at once: the client may receive the greeting and the end
        // before ConnectAsync's own code runs on. The connect still succeeded.
        using var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        listener.Listen(64);
        using var stop = new CancellationTokenSource();
        var serving = Task.Run(async () =>
        {
            while (!stop.IsCancellationRequested)
            {
                using var accepted = await listener.AcceptAsync(stop.Token);
                await accepted.SendAsync("bye"u8.ToArray(), SocketFlags.None);
                accepted.Shutdown(SocketShutdown.Send);
            }
        });

        for (var i = 0; i < 200; i++)
        {
            var probe = new Probe();
            using var client = new ProbeTcpClient((IPEndPoint)listener.LocalEndPoint!, probe);
            Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout), $"Connect {i} reported failure: {string.Join(", ", probe.Events)}.");
            Assert.Equal(DisconnectReason.PeerClosed, await probe.DisconnectedSignal.Task.WaitAsync(s_timeout));
            Assert.Equal(3, probe.ReceivedBytes);
        }

        await stop.CancelAsync();
        listener.Close();
        // The accept loop ends either way: cancelled or closed in AcceptAsync, or at its own check of
        // the token between two connections (then without an exception).
        await Task.WhenAny(serving).WaitAsync(s_timeout);
    }

    [Fact]
    public async Task ConnectAsync_cancelled_from_OnConnecting_throws_OperationCanceledException()
    {
        await using var harness = new ServerHarness(TransportKind.Tcp);
        Assert.True(harness.Start());
        var probe = new Probe();
        using var cts = new CancellationTokenSource();
        using var client = new RecordingTcpClient((IPEndPoint)harness.Endpoint, probe) { BufferPool = harness.Pool };
        client.Connecting = cts.Cancel;

        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => client.ConnectAsync(cts.Token)).WaitAsync(s_timeout);
        Assert.Equal(DisconnectReason.ConnectFailed, await probe.DisconnectedSignal.Task.WaitAsync(s_timeout));
        Assert.Equal(s_failedAttemptEvents, probe.Events);
        Assert.False(client.IsConnected);

        // The client is usable afterwards.
        client.Connecting = null;
        Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout));
        Assert.True(client.Disconnect());
    }

    /// <summary>
    /// An endpoint where nothing accepts: a TCP port or a Unix socket path bound by a socket that
    /// does not listen (connects are refused), or, with <c>listen</c>, a raw listener that never reads.
    /// </summary>
    private sealed class ClosedEndpoint : IDisposable
    {
        private readonly string? _directory;

        public ClosedEndpoint(TransportKind kind, bool listen = false)
        {
            Kind = kind;
            if (kind != TransportKind.Uds)
            {
                Listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
                Listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            }
            else
            {
                _directory = Path.Combine(Path.GetTempPath(), "netserver-" + Guid.NewGuid().ToString("N")[..12]);
                Directory.CreateDirectory(_directory);
                SocketPath = Path.Combine(_directory, "closed.sock");
                Listener = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified);
                Listener.Bind(new UnixDomainSocketEndPoint(SocketPath));
            }

            if (listen)
                Listener.Listen(16);
        }

        public TransportKind Kind { get; }

        public Socket Listener { get; }

        public LeakCheckingBufferPool Pool { get; } = new();

        private string? SocketPath { get; }

        public StreamClient CreateClient(Probe probe)
        {
            StreamClient client = Kind switch
            {
                TransportKind.Tcp => new ProbeTcpClient((IPEndPoint)Listener.LocalEndPoint!, probe),
                TransportKind.Uds => new ProbeUdsClient(SocketPath!, probe),
                _ => SecureTransport.CreateClient((IPEndPoint)Listener.LocalEndPoint!, probe),
            };
            client.BufferPool = Pool;
            return client;
        }

        public void Dispose()
        {
            Listener.Dispose();
            if (_directory is not null)
                Directory.Delete(_directory, recursive: true);
        }
    }
}
