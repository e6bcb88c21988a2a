using System;
using System.Collections.Concurrent;
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
public class ClientTests
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
        await Assert.ThrowsAnyAsync<Exception>(() => serving).WaitAsync(s_timeout);
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

    // --- Disconnect variants ---

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Disconnect_variants_end_the_connection_once_with_LocalDisconnect(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        Assert.True(harness.Start());

        // Disconnect(): returns after OnDisconnected has run.
        var probe1 = new Probe();
        using var client1 = harness.CreateClient(probe1);
        Assert.True(await client1.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout));
        Assert.True(client1.Disconnect());
        Assert.Equal(1, probe1.DisconnectedCount);
        Assert.Equal(DisconnectReason.LocalDisconnect, client1.DisconnectReason);
        Assert.False(client1.Disconnect());
        Assert.False(client1.DisconnectAsync());
        Assert.False(await client1.DisconnectAsync(CancellationToken.None));

        // DisconnectAsync(): returns at once; OnDisconnected follows.
        var probe2 = new Probe();
        using var client2 = harness.CreateClient(probe2);
        Assert.True(await client2.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout));
        Assert.True(client2.DisconnectAsync());
        Assert.Equal(DisconnectReason.LocalDisconnect, await probe2.DisconnectedSignal.Task.WaitAsync(s_timeout));
        Assert.False(client2.DisconnectAsync());

        // await DisconnectAsync(token): completes after OnDisconnected.
        var probe3 = new Probe();
        using var client3 = harness.CreateClient(probe3);
        Assert.True(await client3.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout));
        Assert.True(await client3.DisconnectAsync(CancellationToken.None).WaitAsync(s_timeout));
        Assert.Equal(1, probe3.DisconnectedCount);
        Assert.Equal(DisconnectReason.LocalDisconnect, client3.DisconnectReason);

        foreach (var probe in new[] { probe1, probe2, probe3 })
        {
            Assert.Equal(s_connectionEvents, probe.Events);
            Assert.Equal(1, probe.DisconnectedCount);
        }

        // The server sees each peer close its side.
        await Wait.UntilAsync(() => harness.Probe.Sessions.Count == 3 && harness.ConnectedSessions == 0, "the server to accept and drop all three sessions");
        var serverReasons = await Task.WhenAll(harness.Probe.Sessions.Values.Select(static p => p.DisconnectedSignal.Task)).WaitAsync(s_timeout);
        Assert.Equal(3, serverReasons.Length);
        Assert.All(serverReasons, static r => Assert.Equal(DisconnectReason.PeerClosed, r));
    }

    [Theory]
    [MemberData(nameof(Transports.Plain), MemberType = typeof(Transports))]
    public async Task DisconnectAsync_cancelled_while_queued_bytes_cannot_drain_closes_at_once(TransportKind kind)
    {
        using var peer = new ClosedEndpoint(kind, listen: true);
        var probe = new Probe();
        using var client = peer.CreateClient(probe);
        client.OptionDisconnectTimeout = Timeout.InfiniteTimeSpan;
        Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout));
        using var accepted = await peer.Listener.AcceptAsync().WaitAsync(s_timeout);

        // The peer never reads: fill the kernel buffers (their size varies) until an async send
        // waits; the queue then cannot drain and a graceful close would wait forever.
        var chunk = new ReadOnlyMemory<byte>(new byte[1024 * 1024]);
        Task<bool>? parked = null;
        for (var i = 0; i < 64 && client.BytesSending == 0; i++)
        {
            var send = client.SendAsync(chunk);
            if (!send.IsCompleted)
            {
                parked = send.AsTask();
                break;
            }

            Assert.True(await send);
        }

        await Wait.UntilAsync(() => client.BytesSending > 0, "an async send to wait for the kernel");
        Assert.True(client.BytesPending > 0);

        using var cts = new CancellationTokenSource(TimeSpan.FromMilliseconds(200));
        Assert.True(await client.DisconnectAsync(cts.Token).WaitAsync(s_timeout));
        Assert.Equal(1, probe.DisconnectedCount);
        Assert.Equal(DisconnectReason.LocalDisconnect, client.DisconnectReason);
        Assert.False(client.IsConnected);
        Assert.Empty(Errors(probe));
        if (parked is not null)
            Assert.False(await parked.WaitAsync(s_timeout));
        await peer.Pool.AssertAllReturnedAsync();
    }

    // --- Sends ---

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Blocking_Send_returns_the_byte_count_and_text_is_sent_as_UTF8(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        var received = new MemoryStream();
        harness.Probe.ConfigureSession = p => p.Received = (_, buffer, offset, size) =>
        {
            lock (received)
                received.Write(buffer, (int)offset, (int)size);
        };
        Assert.True(harness.Start());
        var probe = new Probe();
        using var client = harness.CreateClient(probe);
        Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout));

        var bytes = Enumerable.Range(0, 100).Select(static i => (byte)i).ToArray();
        var expected = new MemoryStream();

        // The blocking send returns once the OS has taken the bytes, so BytesSent already counts them.
        Assert.Equal(100, await Task.Run(() => client.Send(bytes)).WaitAsync(s_timeout));
        Assert.Equal(100, client.BytesSent);
        expected.Write(bytes);
        Assert.Equal(10, await Task.Run(() => client.Send(bytes, 5, 10)).WaitAsync(s_timeout));
        expected.Write(bytes, 5, 10);
        Assert.Equal(3, await Task.Run(() => client.Send(new ReadOnlySpan<byte>(bytes, 20, 3))).WaitAsync(s_timeout));
        expected.Write(bytes, 20, 3);
        Assert.Equal(6, await Task.Run(() => client.Send("h\u00e9llo")).WaitAsync(s_timeout));
        expected.Write(Encoding.UTF8.GetBytes("h\u00e9llo"));
        Assert.Equal(3, await Task.Run(() => client.Send("\u20ac".AsSpan())).WaitAsync(s_timeout));
        expected.Write(Encoding.UTF8.GetBytes("\u20ac"));
        Assert.True(client.SendAsync("\u00fc"));
        expected.Write(Encoding.UTF8.GetBytes("\u00fc"));
        Assert.True(client.SendAsync("\u2713".AsSpan()));
        expected.Write(Encoding.UTF8.GetBytes("\u2713"));

        var all = expected.ToArray();

        // BytesReceived counts a read before OnReceived runs: wait for the hook to have seen it all.
        await Wait.UntilAsync(() => { lock (received) return received.Length >= all.Length; }, $"the server to receive {all.Length} bytes");
        Assert.Equal(all.Length, harness.BytesReceived);
        lock (received)
            Assert.Equal(all, received.ToArray());
        Assert.Equal(all.Length, client.BytesSent);
        Assert.Equal(0, client.BytesPending);
    }

    // --- Host names, state flags, statistics ---

    [Fact]
    public async Task TcpClient_connects_to_a_host_name()
    {
        await using var harness = new ServerHarness(TransportKind.Tcp);
        harness.Probe.ConfigureSession = Echo;
        Assert.True(harness.Start());
        var port = ((IPEndPoint)harness.Endpoint).Port;

        var probe = new Probe();
        using var client = new RecordingTcpClient(new DnsEndPoint("localhost", port), probe) { BufferPool = harness.Pool };
        Assert.Equal("localhost", client.Address);
        Assert.Equal(port, client.Port);
        Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout));
        Assert.True(client.SendAsync("ping"));
        await Wait.UntilAsync(() => probe.ReceivedBytes == 4, "the echo over the host-name connection");
        Assert.True(client.Disconnect());

        // The synchronous connect resolves too, and so does the (string, int) constructor.
        Assert.True(await Task.Run(client.Connect).WaitAsync(s_timeout));
        Assert.True(client.Disconnect());
        using var plain = new TcpClient("localhost", port);
        Assert.True(await Task.Run(plain.Connect).WaitAsync(s_timeout));
        Assert.True(plain.IsConnected);
        Assert.True(plain.Disconnect());
    }

    [Fact]
    public async Task IsConnecting_and_IsConnected_follow_the_connection()
    {
        await using var harness = new ServerHarness(TransportKind.Tcp);
        Assert.True(harness.Start());
        var probe = new Probe();
        using var client = new RecordingTcpClient((IPEndPoint)harness.Endpoint, probe) { BufferPool = harness.Pool };
        Assert.False(client.IsConnecting);
        Assert.False(client.IsConnected);

        Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout));
        Assert.True(client.IsConnected);
        Assert.False(client.IsConnecting);
        Assert.True(client.Disconnect());
        Assert.False(client.IsConnected);

        Assert.True(await Task.Run(client.Connect).WaitAsync(s_timeout));
        Assert.True(client.Disconnect());

        string[] cycle =
        [
            "connecting: connecting=True connected=False",
            "connected: connecting=False connected=True",
            "disconnecting: connecting=False connected=False",
            "disconnected: connecting=False connected=False",
        ];
        Assert.Equal(Repeat(cycle, 2), client.States);
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Statistics_start_from_zero_on_each_connection(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        harness.Probe.ConfigureSession = Echo;
        Assert.True(harness.Start());
        var probe = new Probe();
        using var client = harness.CreateClient(probe);

        Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout));
        Assert.True(client.SendAsync(new byte[50]));
        await Wait.UntilAsync(() => client.BytesReceived == 50, "the 50-byte echo");
        Assert.Equal(50, client.BytesSent);
        Assert.True(client.Disconnect());
        Assert.Equal(50, client.BytesSent);

        Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout));
        Assert.Equal(0, client.BytesSent);
        Assert.Equal(0, client.BytesReceived);
        Assert.Equal(0, client.BytesPending);
        Assert.Equal(0, client.BytesSending);
        Assert.True(client.SendAsync(new byte[7]));
        await Wait.UntilAsync(() => client.BytesReceived == 7, "the 7-byte echo");
        Assert.Equal(7, client.BytesSent);
        Assert.True(client.Disconnect());
    }

    // --- Reconnecting ---

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Reconnect_and_ReconnectAsync_run_a_whole_connection_each(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        Assert.True(harness.Start());
        var probe = new Probe();
        using var client = harness.CreateClient(probe);
        Assert.False(client.Reconnect());
        Assert.False(client.ReconnectAsync());

        Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout));
        var known = new List<Guid>();
        await NextSessionAsync(harness, known);

        Assert.True(await Task.Run(client.Reconnect).WaitAsync(s_timeout));
        Assert.True(client.IsConnected);
        Assert.Equal(Repeat(s_connectionEvents, 1).Concat(["connecting", "connected"]), probe.Events);
        await NextSessionAsync(harness, known);

        Assert.True(client.ReconnectAsync());
        await Wait.UntilAsync(() => probe.Events.Count(static e => e == "connected") == 3 && client.IsConnected, "the asynchronous reconnect");
        var (third, _) = await NextSessionAsync(harness, known);

        // The asynchronous reconnect starts the receive loop.
        var session = harness.FindSession(third)!;
        Assert.True(session.SendAsync(new byte[] { 42 }));
        await Wait.UntilAsync(() => probe.ReceivedBytes == 1, "data on the reconnected client");

        Assert.True(client.Disconnect());
        var (connected, failed) = AssertWholeAttempts(probe.Events);
        Assert.Equal(3, connected);
        Assert.Equal(0, failed);
        Assert.Equal(3, probe.DisconnectedCount);
        await Wait.UntilAsync(() => harness.ConnectedSessions == 0, "the server to drop every session");
        Assert.All(harness.Probe.Sessions.Values, static p => Assert.Equal(1, p.DisconnectedCount));
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Reconnect_loop_in_OnDisconnected_survives_a_server_that_drops_every_session(TransportKind kind)
    {
        const int Cycles = 50;
        await using var harness = new ServerHarness(kind);
        harness.Probe.ConfigureSession = static p => p.Connected = static c => c.Disconnect();
        Assert.True(harness.Start());

        var probe = new Probe();
        using var client = harness.CreateClient(probe);
        var reasons = new ConcurrentQueue<DisconnectReason>();
        var refused = 0;
        var maxNesting = 0;
        var maxFrames = 0;
        var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        probe.Disconnected = (c, reason) =>
        {
            reasons.Enqueue(reason);
            var nesting = ++t_disconnectedNesting;
            try
            {
                maxNesting = Math.Max(maxNesting, nesting);
                maxFrames = Math.Max(maxFrames, new StackTrace().FrameCount);
                if (probe.DisconnectedCount < Cycles)
                {
                    if (!((StreamClient)c).ConnectAsync())
                        Interlocked.Increment(ref refused);
                }
                else
                {
                    done.TrySetResult();
                }
            }
            finally
            {
                t_disconnectedNesting--;
            }
        };

        Assert.True(client.ConnectAsync());
        await done.Task.WaitAsync(TimeSpan.FromSeconds(30));

        // Over TLS the session closes before its handshake, which it abandons: the client's
        // handshake fails (the server hung up on its hello) instead of the connection ending after it.
        var expected = kind == TransportKind.Ssl ? DisconnectReason.HandshakeFailed : DisconnectReason.PeerClosed;
        Assert.Equal(0, refused);
        Assert.Equal(Repeat(s_connectionEvents, Cycles), probe.Events);
        Assert.All(reasons, r => Assert.Equal(expected, r));
        Assert.True(maxNesting == 1, $"OnDisconnected of a new connection ran nested inside the previous one's (depth {maxNesting}, {maxFrames} frames): the reconnect loop grows the stack.");
        Assert.False(client.IsConnected);

        await Wait.UntilAsync(() => harness.ConnectedSessions == 0, "the server to drop the last session");
        Assert.Equal(Cycles, harness.Probe.Sessions.Count);
        Assert.All(harness.Probe.Sessions.Values, static p => Assert.Equal(s_connectionEvents, p.Events));
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Immediate_reconnect_loop_against_a_closed_endpoint_does_not_recurse(TransportKind kind)
    {
        const int Attempts = 100;
        using var closed = new ClosedEndpoint(kind);
        var probe = new Probe();
        using var client = closed.CreateClient(probe);
        var reasons = new ConcurrentQueue<DisconnectReason>();
        var maxNesting = 0;
        var maxFrames = 0;
        var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        probe.Disconnected = (c, reason) =>
        {
            reasons.Enqueue(reason);
            var nesting = ++t_disconnectedNesting;
            try
            {
                maxNesting = Math.Max(maxNesting, nesting);
                maxFrames = Math.Max(maxFrames, new StackTrace().FrameCount);
                if (probe.DisconnectedCount < Attempts)
                    ((StreamClient)c).ConnectAsync();
                else
                    done.TrySetResult();
            }
            finally
            {
                t_disconnectedNesting--;
            }
        };

        Assert.True(client.ConnectAsync());
        await done.Task.WaitAsync(TimeSpan.FromSeconds(30));

        Assert.Equal(Repeat(s_failedAttemptEvents, Attempts), probe.Events);
        Assert.All(reasons, static r => Assert.Equal(DisconnectReason.ConnectFailed, r));
        Assert.True(maxNesting == 1, $"A failed attempt's OnDisconnected ran nested inside the previous one's (depth {maxNesting}, {maxFrames} frames): a reconnect loop in OnDisconnected recurses and can overflow the stack.");
        await closed.Pool.AssertAllReturnedAsync();
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Reconnect_loop_in_OnDisconnected_survives_server_stop_and_restart(TransportKind kind)
    {
        const int Restarts = 3;
        await using var harness = new ServerHarness(kind);
        if (harness.Tcp is not null)
            harness.Tcp.OptionReuseAddress = true; // the port's old connections sit in TIME_WAIT
        Assert.True(harness.Start());

        var probe = new Probe();
        using var client = harness.CreateClient(probe);
        using var stopLoop = new CancellationTokenSource();
        var failed = 0;
        var delayed = 0;
        probe.Disconnected = (c, reason) =>
        {
            if (stopLoop.IsCancellationRequested)
                return;
            var self = (StreamClient)c;
            if (reason != DisconnectReason.ConnectFailed)
            {
                self.ConnectAsync();
                return;
            }

            // While the server is down, retry after a short pause (the chat client's pattern, without blocking a thread).
            Interlocked.Increment(ref failed);
            Interlocked.Increment(ref delayed);
            _ = Task.Delay(10).ContinueWith(
                _ =>
                {
                    if (!stopLoop.IsCancellationRequested)
                        self.ConnectAsync();
                    Interlocked.Decrement(ref delayed);
                },
                TaskScheduler.Default);
        };

        Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout));
        for (var round = 1; round <= Restarts; round++)
        {
            var failedBefore = Volatile.Read(ref failed);
            Assert.True(await Task.Run(harness.Stop).WaitAsync(s_timeout));
            await Wait.UntilAsync(() => Volatile.Read(ref failed) > failedBefore, "a reconnect attempt refused while the server is down");
            Assert.True(harness.Start());
            await Wait.UntilAsync(() => client.IsConnected && harness.ConnectedSessions == 1, $"the client to reconnect after restart {round}");
        }

        await stopLoop.CancelAsync();
        await Wait.UntilAsync(() => Volatile.Read(ref delayed) == 0 && !client.IsConnecting, "the loop to settle");
        Assert.True(client.Disconnect());

        var (connected, refusedAttempts) = AssertWholeAttempts(probe.Events);
        Assert.Equal(Restarts + 1, connected);
        Assert.Equal(Volatile.Read(ref failed), refusedAttempts);
        Assert.Equal(connected + refusedAttempts, probe.DisconnectedCount);
        await Wait.UntilAsync(() => harness.ConnectedSessions == 0, "the server to drop the last session");
        Assert.All(harness.Probe.Sessions.Values, static p => Assert.Equal(1, p.DisconnectedCount));
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

    /// <summary>A TCP client (IP or host-name endpoint) that forwards hooks to a probe and records its state flags inside each hook.</summary>
    private sealed class RecordingTcpClient : TcpClient
    {
        public RecordingTcpClient(IPEndPoint endpoint, Probe probe)
            : base(endpoint) => Probe = probe;

        public RecordingTcpClient(DnsEndPoint endpoint, Probe probe)
            : base(endpoint) => Probe = probe;

        public Probe Probe { get; }

        public ConcurrentQueue<string> States { get; } = new();

        public Action? Connecting { get; set; }

        private void Record(string hook) => States.Enqueue($"{hook}: connecting={IsConnecting} connected={IsConnected}");

        protected override void OnConnecting()
        {
            Record("connecting");
            Probe.OnConnecting();
            Connecting?.Invoke();
        }

        protected override void OnConnected()
        {
            Record("connected");
            Probe.OnConnected(this);
        }

        protected override void OnDisconnecting()
        {
            Record("disconnecting");
            Probe.OnDisconnecting();
        }

        protected override void OnDisconnected(DisconnectReason reason)
        {
            Record("disconnected");
            Probe.OnDisconnected(this, reason);
        }

        protected override void OnReceived(byte[] buffer, long offset, long size) => Probe.OnReceived(this, buffer, offset, size);

        protected override void OnError(SocketError error) => Probe.OnError(this, error);
    }
}
