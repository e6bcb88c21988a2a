using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Runtime.CompilerServices;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Tcp;

/// <summary>
/// Regressions for the bugs an independent review found: a hook that ends its connection in the
/// middle of a flush; Stop during a multicast; a failing CreateSession; a reconnect that overtakes
/// the previous connection's OnDisconnected; a blocking Send that reports bytes it never sent;
/// multicasts that overtake OnConnected; OnEmpty racing OnSent; keep-alive values the system
/// refuses; Receive after a disconnect; cancellation registrations left on a long-lived token.
/// </summary>
public class ReviewRegressionTests
{
    private const int Big = 8 * 1024 * 1024;
    private static readonly TimeSpan s_timeout = TimeSpan.FromSeconds(15);
    private static readonly TimeSpan s_prompt = TimeSpan.FromSeconds(10); // well under the engine's 30 s bound, loose enough for a busy 2-core machine
    private static readonly string[] s_connectionEvents = ["connecting", "connected", "disconnecting", "disconnected"];

    /// <summary>Stops the server on a thread of its own and checks that it took well under the engine's 30 s wait.</summary>
    private static async Task AssertStopsPromptlyAsync(ServerHarness harness)
    {
        var watch = Stopwatch.StartNew();
        Assert.True(await HarnessExtensions.RunBlocking(harness.Stop).WaitAsync(s_timeout));
        Assert.True(watch.Elapsed < s_prompt, $"Stop took {watch.Elapsed}.");
        Assert.Equal(0, harness.ConnectedSessions);
    }

    // --- 1. OnSent ends its session while the flusher still has bytes to send ---

    /// <summary>How OnSent ends its own session.</summary>
    public enum SentEnding
    {
        Throws,
        Disposes,
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public Task OnSent_that_throws_in_the_middle_of_a_flush_ends_the_session_with_HandlerException(TransportKind kind) =>
        OnSentEndsTheSessionMidFlushAsync(kind, SentEnding.Throws);

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public Task OnSent_that_disposes_its_session_in_the_middle_of_a_flush_ends_it_with_Disposed(TransportKind kind) =>
        OnSentEndsTheSessionMidFlushAsync(kind, SentEnding.Disposes);

    private static async Task OnSentEndsTheSessionMidFlushAsync(TransportKind kind, SentEnding ending)
    {
        // OnEmpty queues 8 MiB, so the flusher's next non-blocking send is partial (the peer does
        // not read) and an async send of the rest must follow; OnSent for that partial send ends
        // the session. The flusher must notice the closed socket instead of starting the async send
        // on it (which threw ObjectDisposedException and leaked the flusher's reference, so the
        // session never finished and Stop waited 30 s).
        await using var harness = new ServerHarness(kind);
        var thrown = new InvalidOperationException("OnSent failed on purpose.");
        var big = new byte[Big];
        var stage = 0; // 1: the next OnEmpty queues the big send; 2: OnSent ends the session
        var empties = 0;
        harness.Probe.ConfigureSession = probe =>
        {
            probe.Empty = c =>
            {
                Interlocked.Increment(ref empties);
                if (Interlocked.CompareExchange(ref stage, 2, 1) == 1 && !c.SendAsync(big))
                    throw new InvalidOperationException("The big send was refused.");
            };
            probe.Sent = (c, _, _) =>
            {
                if (Volatile.Read(ref stage) != 2)
                    return;
                if (ending == SentEnding.Throws)
                    throw thrown;
                c.Dispose();
            };
        };
        Assert.True(harness.Start());
        var (peer, session, probe) = await harness.ConnectPeerAsync();
        using (peer)
        {
            await Wait.UntilAsync(() => Volatile.Read(ref empties) >= 1, "the OnEmpty that follows the connect");
            Volatile.Write(ref stage, 1);

            // This thread becomes the flusher: the byte goes out, OnEmpty queues the big send, the flush goes on.
            Assert.True(session.SendAsync(new byte[1]));

            var expected = ending == SentEnding.Throws ? DisconnectReason.HandlerException : DisconnectReason.Disposed;
            Assert.Equal(expected, await probe.DisconnectedSignal.Task.WaitAsync(s_timeout));
            if (ending == SentEnding.Throws)
                Assert.Same(thrown, session.DisconnectException);
            Assert.True(session.BytesSent < Big, "The session claims to have sent bytes after it was closed.");

            await AssertStopsPromptlyAsync(harness);
            Assert.Equal(1, probe.DisconnectedCount);
        }
    }

    // --- 2. Stop while a multicast loop feeds slow readers ---

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Stop_while_multicasting_to_40_slow_readers_returns_promptly(TransportKind kind)
    {
        const int Sessions = 40;
        const long PendingCap = 16 * 1024 * 1024;
        var payload = Framing.Pattern(0, 16 * 1024);
        for (var round = 0; round < 3; round++)
        {
            await using var harness = new ServerHarness(kind);

            // No send limit: the sessions must be ended by the Stop, not by a full queue.
            harness.Probe.ConfigureSession = static probe => probe.Connected = static c => c.OptionSendBufferLimit = 0;
            Assert.True(harness.Start());
            var peers = new List<Socket>(Sessions);
            using var stop = new CancellationTokenSource();
            var readers = new List<Task>(Sessions);
            try
            {
                for (var i = 0; i < Sessions; i++)
                    peers.Add(await harness.ConnectRawAsync());
                await harness.Probe.WaitForSessionsAsync(Sessions);
                readers.AddRange(peers.Select(peer => DrainAsync(peer, 4096, slowly: true, stop.Token)));

                var multicasting = Task.Run(async () =>
                {
                    var messages = 0;
                    while (!stop.IsCancellationRequested && harness.Multicast(payload))
                    {
                        messages++;
                        if (harness.BytesPending > PendingCap)
                            await Task.Delay(1);
                    }

                    return messages;
                });

                // Stop while queues are backed up and flushers are busy.
                await Wait.UntilAsync(() => harness.BytesSent > 4 * 1024 * 1024 && harness.BytesPending > 0, "the multicasts to back up");
                await AssertStopsPromptlyAsync(harness);

                Assert.True(await multicasting.WaitAsync(s_timeout) > 0); // Multicast returns false once stopped
                foreach (var probe in harness.Probe.Sessions.Values)
                {
                    Assert.Equal(DisconnectReason.ServerStopped, await probe.DisconnectedSignal.Task.WaitAsync(s_timeout));
                    Assert.Equal(1, probe.DisconnectedCount);
                }
            }
            finally
            {
                await stop.CancelAsync();
                foreach (var peer in peers)
                    peer.Dispose();
                await Task.WhenAll(readers).WaitAsync(s_timeout);
            }
        }
    }

    /// <summary>Reads and discards until the connection ends, <paramref name="readSize"/> bytes at most per read; <paramref name="slowly"/>: pausing after each read.</summary>
    private static async Task DrainAsync(Socket peer, int readSize, bool slowly, CancellationToken token)
    {
        var buffer = new byte[readSize];
        try
        {
            while (await peer.ReceiveAsync(buffer, SocketFlags.None, token) > 0)
            {
                if (slowly)
                    await Task.Delay(1, token);
            }
        }
        catch (Exception e) when (e is SocketException or OperationCanceledException or ObjectDisposedException)
        {
            // The server stopped, or the test is done with this peer.
        }
    }

    // --- 3. CreateSession that throws ---

    [Theory]
    [MemberData(nameof(Transports.Plain), MemberType = typeof(Transports))]
    public async Task A_CreateSession_that_throws_closes_that_connection_reports_the_exception_and_accepting_goes_on(TransportKind kind)
    {
        var creator = new FailingEverySecondSession();
        var pool = new LeakCheckingBufferPool();
        var directory = Path.Combine(Path.GetTempPath(), "netserver-" + Guid.NewGuid().ToString("N")[..12]);
        using var tcp = kind == TransportKind.Tcp ? new FlakyTcpServer(new IPEndPoint(IPAddress.Loopback, 0), creator) { BufferPool = pool } : null;
        if (kind == TransportKind.Uds)
            Directory.CreateDirectory(directory);
        using var uds = kind == TransportKind.Uds ? new FlakyUdsServer(Path.Combine(directory, "s.sock"), creator) { BufferPool = pool } : null;
        var open = new List<Socket>();
        try
        {
            Assert.True(tcp?.Start() ?? uds!.Start());
            var endpoint = tcp?.Endpoint ?? uds!.Endpoint;

            // One at a time, so connection n is the n-th CreateSession call: every second one fails.
            for (var n = 1; n <= 6; n++)
            {
                var peer = await ConnectRawAsync(endpoint);
                if (n % 2 == 0)
                {
                    using (peer)
                        await AssertClosedByServerAsync(peer);
                }
                else
                {
                    open.Add(peer);
                    await AssertEchoesAsync(peer, $"hello {n}");
                }
            }

            Assert.Equal(3, tcp?.ConnectedSessions ?? uds!.ConnectedSessions);
            Assert.Equal(3, creator.Errors.Count);
            Assert.All(creator.Errors, e => Assert.Same(creator.Thrown, e));

            // The sessions that were created still work.
            foreach (var peer in open)
                await AssertEchoesAsync(peer, "still here");
            Assert.True(await HarnessExtensions.RunBlocking(() => tcp?.Stop() ?? uds!.Stop()).WaitAsync(s_timeout));
        }
        finally
        {
            foreach (var peer in open)
                peer.Dispose();
            if (kind == TransportKind.Uds)
                Directory.Delete(directory, recursive: true);
        }

        await pool.AssertAllReturnedAsync();
    }

    private static async Task<Socket> ConnectRawAsync(EndPoint endpoint)
    {
        var socket = endpoint.AddressFamily == AddressFamily.Unix
            ? new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified)
            : new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await socket.ConnectAsync(endpoint).WaitAsync(s_timeout);
        return socket;
    }

    private static async Task AssertEchoesAsync(Socket peer, string text)
    {
        var message = Encoding.ASCII.GetBytes(text);
        await peer.SendAsync(message, SocketFlags.None).WaitAsync(s_timeout);
        Assert.Equal(text, Encoding.ASCII.GetString(await Wait.ReadExactlyAsync(peer, message.Length)));
    }

    /// <summary>The server closed the connection: the peer reads the end of stream (or a reset), not a timeout.</summary>
    private static async Task AssertClosedByServerAsync(Socket peer)
    {
        using var cts = new CancellationTokenSource(s_timeout);
        try
        {
            Assert.Equal(0, await peer.ReceiveAsync(new byte[16], SocketFlags.None, cts.Token));
        }
        catch (SocketException e) when (e.SocketErrorCode == SocketError.ConnectionReset)
        {
            // A reset is a close too.
        }
    }

    /// <summary>Creates echoing probe sessions, except that every second call throws; collects what the server's OnError(Exception) gets.</summary>
    private sealed class FailingEverySecondSession
    {
        private int _calls;

        public InvalidOperationException Thrown { get; } = new("CreateSession failed on purpose.");

        public ConcurrentQueue<Exception> Errors { get; } = new();

        public TSession Create<TSession>(Func<Probe, TSession> create)
        {
            if (Interlocked.Increment(ref _calls) % 2 == 0)
                throw Thrown;
            return create(new Probe { Received = static (c, buffer, offset, size) => c.SendAsync(buffer, offset, size) });
        }
    }

    private sealed class FlakyTcpServer(IPEndPoint endpoint, FailingEverySecondSession creator) : TcpServer(endpoint)
    {
        protected override TcpSession CreateSession() => creator.Create(probe => new ProbeTcpSession(this, probe));

        protected override void OnError(Exception exception) => creator.Errors.Enqueue(exception);
    }

    private sealed class FlakyUdsServer(string path, FailingEverySecondSession creator) : UdsServer(path)
    {
        protected override UdsSession CreateSession() => creator.Create(probe => new ProbeUdsSession(this, probe));

        protected override void OnError(Exception exception) => creator.Errors.Enqueue(exception);
    }

    // --- 4. Reconnect at once after DisconnectAsync ---

    /// <summary>How the client connects again right after <c>DisconnectAsync()</c>.</summary>
    public enum Reconnect
    {
        ConnectAsync,
        AwaitedConnectAsync,
        Connect,
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public Task ConnectAsync_right_after_DisconnectAsync_starts_after_the_previous_OnDisconnected(TransportKind kind) =>
        ReconnectRightAfterDisconnectAsync(kind, Reconnect.ConnectAsync);

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public Task Awaited_ConnectAsync_right_after_DisconnectAsync_starts_after_the_previous_OnDisconnected(TransportKind kind) =>
        ReconnectRightAfterDisconnectAsync(kind, Reconnect.AwaitedConnectAsync);

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public Task Connect_right_after_DisconnectAsync_waits_for_the_previous_OnDisconnected(TransportKind kind) =>
        ReconnectRightAfterDisconnectAsync(kind, Reconnect.Connect);

    private static async Task ReconnectRightAfterDisconnectAsync(TransportKind kind, Reconnect reconnect)
    {
        const int Reconnects = 20;
        await using var harness = new ServerHarness(kind);
        Assert.True(harness.Start());
        var probe = new Probe();
        using var client = harness.CreateClient(probe);
        if (reconnect == Reconnect.Connect)
            Assert.True(await HarnessExtensions.RunBlocking(client.Connect).WaitAsync(s_timeout));
        else
            Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout));

        // Still in flight when the disconnect starts: the old connection sends (and counts) for a while.
        var tail = new byte[2 * 1024 * 1024];
        for (var i = 0; i < Reconnects; i++)
        {
            Assert.True(client.SendAsync(tail));
            switch (reconnect)
            {
                case Reconnect.ConnectAsync:
                    Assert.True(client.DisconnectAsync());
                    Assert.True(client.ConnectAsync());
                    await Wait.UntilAsync(() => probe.Events.Count(static e => e == "connected") == i + 2 && client.IsConnected, "the reconnect");
                    break;
                case Reconnect.AwaitedConnectAsync:
                    Assert.True(client.DisconnectAsync());
                    Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout));
                    break;
                default:
                    Assert.True(await HarnessExtensions.RunBlocking(() => client.DisconnectAsync() && client.Connect()).WaitAsync(s_timeout));
                    break;
            }

            // The counters are the new connection's alone.
            Assert.Equal(0, client.BytesSent);
            var fresh = new byte[1000 + i];
            Assert.True(client.SendAsync(fresh));
            await Wait.UntilAsync(() => client.BytesSent >= fresh.Length, "the new connection's send");
            Assert.Equal(fresh.Length, client.BytesSent);
        }

        Assert.True(await client.DisconnectAsync(CancellationToken.None).WaitAsync(s_timeout));

        // One connection at a time: each one's hooks, ending with OnDisconnected, before the next one's.
        Assert.Equal(Enumerable.Repeat(s_connectionEvents, Reconnects + 1).SelectMany(static e => e), probe.Events);
    }

    // --- 5. The blocking Send on a connection that closes before the kernel took the bytes ---

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public Task Blocking_Send_returns_0_when_another_thread_disposes_the_connection(TransportKind kind) =>
        BlockingSendInterruptedAsync(kind, Interruption.DisposeFromAnotherThread);

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public Task Blocking_Send_returns_0_when_the_peer_goes_away(TransportKind kind) =>
        BlockingSendInterruptedAsync(kind, Interruption.PeerCloses);

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public Task Blocking_Send_returns_0_when_OnSent_disposes_the_connection_before_the_send_waits(TransportKind kind) =>
        BlockingSendInterruptedAsync(kind, Interruption.DisposeFromOnSent);

    /// <summary>What ends the connection while the blocking Send waits.</summary>
    public enum Interruption
    {
        DisposeFromAnotherThread,
        PeerCloses,
        DisposeFromOnSent,
    }

    private static async Task BlockingSendInterruptedAsync(TransportKind kind, Interruption interruption)
    {
        await using var harness = new ServerHarness(kind);
        if (interruption == Interruption.DisposeFromOnSent)
            harness.Probe.ConfigureSession = static probe => probe.Sent = static (c, _, _) => c.Dispose();
        Assert.True(harness.Start());
        var (peer, session, probe) = await harness.ConnectPeerAsync();
        using (peer)
        {
            // The peer does not read: the kernel takes part of the 8 MiB, the rest waits.
            var data = new byte[Big];
            var sending = HarnessExtensions.RunBlocking(() => session.Send(data));
            if (interruption != Interruption.DisposeFromOnSent)
            {
                await HarnessExtensions.WaitUntilStableAsync(() => session.BytesPending, "the session's BytesPending");
                Assert.False(sending.IsCompleted, "Send returned while the peer was not reading.");
                if (interruption == Interruption.DisposeFromAnotherThread)
                {
                    await HarnessExtensions.RunBlocking(() =>
                    {
                        session.Dispose();
                        return true;
                    }).WaitAsync(s_timeout);
                }
                else
                {
                    // Unread bytes make the close a reset (TCP); a Unix socket's sender gets EPIPE.
                    peer.Dispose();
                }
            }

            Assert.Equal(0, await sending.WaitAsync(s_timeout));
            Assert.True(session.BytesSent < Big, $"BytesSent is {session.BytesSent} of {Big}.");
            await probe.DisconnectedSignal.Task.WaitAsync(s_timeout);
        }
    }

    // --- 6. Multicasts made during OnConnected reach the session, in call order with its own sends ---

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Multicasts_made_while_OnConnected_runs_reach_the_session_in_call_order_with_its_greeting(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        var greeting = Encoding.ASCII.GetBytes("greeting from OnConnected");
        var payload = Enumerable.Repeat((byte)'M', 32).ToArray();
        const int multicasts = 20;
        var entered = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        using var gate = new ManualResetEventSlim();
        harness.Probe.ConfigureSession = probe => probe.Connected = c =>
        {
            // The session is in Sessions while its hook runs: what is multicast now waits in its queue,
            // ahead of the greeting sent after it (issue 18: nothing multicast after joining is missed).
            entered.TrySetResult();
            gate.Wait(s_timeout);
            c.SendAsync(greeting);
        };
        Assert.True(harness.Start());
        using var peer = await harness.ConnectRawAsync();
        try
        {
            await entered.Task.WaitAsync(s_timeout);
            var multicasting = HarnessExtensions.RunBlocking(() =>
            {
                for (var i = 0; i < multicasts; i++)
                    Assert.True(harness.Multicast(payload));
                return true;
            });
            await multicasting.WaitAsync(s_timeout);
        }
        finally
        {
            gate.Set();
        }

        var expected = Enumerable.Repeat(payload, multicasts).SelectMany(b => b).Concat(greeting).ToArray();
        Assert.Equal(expected, await Wait.ReadExactlyAsync(peer, expected.Length));

        // And after the connect, multicasts keep arriving.
        await Wait.UntilAsync(() => harness.Multicast(payload) && peer.Available >= payload.Length, "a multicast to arrive");
        Assert.Equal(payload, await Wait.ReadExactlyAsync(peer, payload.Length));
    }

    // --- 7. OnEmpty and OnSent never overlap ---

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task OnEmpty_and_OnSent_do_not_overlap_when_a_multicast_comes_during_the_connect(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        var recorders = new ConcurrentQueue<SendHookRecorder>();
        harness.Probe.ConfigureSession = probe => recorders.Enqueue(new SendHookRecorder(probe, sendFromConnected: null));
        Assert.True(harness.Start());
        using var peer = await harness.ConnectRawAsync();
        using var stop = new CancellationTokenSource();
        var draining = DrainAsync(peer, 65536, slowly: false, stop.Token);
        await Wait.UntilAsync(() => !recorders.IsEmpty, "the session");
        using var recorder = recorders.Single();

        await recorder.ConnectedEntered.WaitAsync(s_timeout);
        Assert.True(harness.Multicast(new byte[64]));

        // After the connect as well, while multicasts keep coming.
        await Wait.UntilAsync(() => harness.Multicast(new byte[64]) && recorder.Sents > 0 && recorder.Empties > 0, "OnSent and OnEmpty after the connect");
        Assert.Equal(0, recorder.Overlaps);
        await stop.CancelAsync();
        await draining.WaitAsync(s_timeout);
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task OnEmpty_and_OnSent_do_not_overlap_when_a_session_sends_from_OnConnected(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        var recorders = new ConcurrentQueue<SendHookRecorder>();
        var greeting = new byte[2 * 1024 * 1024];
        harness.Probe.ConfigureSession = probe => recorders.Enqueue(new SendHookRecorder(probe, greeting));
        Assert.True(harness.Start());
        using var peer = await harness.ConnectRawAsync();
        using var stop = new CancellationTokenSource();
        var draining = DrainAsync(peer, 65536, slowly: false, stop.Token);
        await Wait.UntilAsync(() => !recorders.IsEmpty, "the session");
        using var recorder = recorders.Single();

        await Wait.UntilAsync(() => recorder.Sents > 0 && recorder.Empties > 0, "OnSent and OnEmpty after the connect");
        Assert.Equal(0, recorder.Overlaps);
        await stop.CancelAsync();
        await draining.WaitAsync(s_timeout);
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task OnEmpty_and_OnSent_do_not_overlap_when_a_client_sends_from_OnConnected(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        Assert.True(harness.Start());
        var probe = new Probe();
        using var recorder = new SendHookRecorder(probe, new byte[2 * 1024 * 1024]);
        using var client = harness.CreateClient(probe);
        Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout));

        await Wait.UntilAsync(() => recorder.Sents > 0 && recorder.Empties > 0, "OnSent and OnEmpty after the connect");
        Assert.Equal(0, recorder.Overlaps);
    }

    /// <summary>
    /// Counts OnSent and OnEmpty calls of one connection that overlap. To give an overlap every
    /// chance where the engine would allow one, OnConnected (after its optional send) waits for an
    /// OnSent on another thread, and such an OnSent, while OnConnected runs, waits for an OnEmpty
    /// to start; both waits are bounded, so a correct engine only loses a little time.
    /// </summary>
    private sealed class SendHookRecorder : IDisposable
    {
        private static readonly TimeSpan s_hold = TimeSpan.FromMilliseconds(200);
        private readonly TaskCompletionSource _connectedEntered = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private readonly ManualResetEventSlim _sentElsewhere = new();
        private readonly ManualResetEventSlim _emptyStarted = new();
        private readonly byte[]? _sendFromConnected;
        private int _connectedThread;
        private int _inside;
        private int _overlaps;
        private int _sents;
        private int _empties;

        public SendHookRecorder(Probe probe, byte[]? sendFromConnected)
        {
            _sendFromConnected = sendFromConnected;
            probe.Connected = OnConnected;
            probe.Sent = OnSent;
            probe.Empty = OnEmpty;
        }

        public Task ConnectedEntered => _connectedEntered.Task;

        public int Overlaps => Volatile.Read(ref _overlaps);

        public int Sents => Volatile.Read(ref _sents);

        public int Empties => Volatile.Read(ref _empties);

        public void Dispose()
        {
            _sentElsewhere.Dispose();
            _emptyStarted.Dispose();
        }

        private void OnConnected(StreamConnection connection)
        {
            Volatile.Write(ref _connectedThread, Environment.CurrentManagedThreadId);
            _connectedEntered.TrySetResult();
            if (_sendFromConnected is not null && !connection.SendAsync(_sendFromConnected))
                throw new InvalidOperationException("The send from OnConnected was refused.");
            _sentElsewhere.Wait(s_hold);
            Volatile.Write(ref _connectedThread, 0);
        }

        private void OnSent(StreamConnection connection, long sent, long pending)
        {
            Enter();
            Interlocked.Increment(ref _sents);
            var connecting = Volatile.Read(ref _connectedThread);
            if (connecting != 0 && connecting != Environment.CurrentManagedThreadId)
            {
                _sentElsewhere.Set();
                _emptyStarted.Wait(s_hold);
            }

            Exit();
        }

        private void OnEmpty(StreamConnection connection)
        {
            Enter();
            Interlocked.Increment(ref _empties);
            _emptyStarted.Set();
            Exit();
        }

        private void Enter()
        {
            if (Interlocked.Increment(ref _inside) != 1)
                Interlocked.Increment(ref _overlaps);
        }

        private void Exit() => Interlocked.Decrement(ref _inside);
    }

    // --- 8. Keep-alive settings the system refuses ---

    [Fact]
    public async Task Tcp_keep_alive_settings_refuse_0_and_accept_minus_1_and_1()
    {
        using var server = new TcpServer(IPAddress.Loopback, 0) { OptionKeepAlive = true };
        using var settingsClient = new TcpClient(IPAddress.Loopback, 1);
        var settings = new (string Name, Action<int> Set, Func<int> Get)[]
        {
            (nameof(server.OptionTcpKeepAliveTime), v => server.OptionTcpKeepAliveTime = v, () => server.OptionTcpKeepAliveTime),
            (nameof(server.OptionTcpKeepAliveInterval), v => server.OptionTcpKeepAliveInterval = v, () => server.OptionTcpKeepAliveInterval),
            (nameof(server.OptionTcpKeepAliveRetryCount), v => server.OptionTcpKeepAliveRetryCount = v, () => server.OptionTcpKeepAliveRetryCount),
            (nameof(settingsClient.OptionTcpKeepAliveTime), v => settingsClient.OptionTcpKeepAliveTime = v, () => settingsClient.OptionTcpKeepAliveTime),
            (nameof(settingsClient.OptionTcpKeepAliveInterval), v => settingsClient.OptionTcpKeepAliveInterval = v, () => settingsClient.OptionTcpKeepAliveInterval),
            (nameof(settingsClient.OptionTcpKeepAliveRetryCount), v => settingsClient.OptionTcpKeepAliveRetryCount = v, () => settingsClient.OptionTcpKeepAliveRetryCount),
        };
        foreach (var (name, set, get) in settings)
        {
            Assert.Equal(name, Assert.Throws<ArgumentOutOfRangeException>(() => set(0)).ParamName);
            set(-1);
            Assert.Equal(-1, get());
            set(1);
            Assert.Equal(1, get());
        }

        // The system takes 1 for all three, on both ends.
        Assert.True(server.Start());
        using var client = new TcpClient((IPEndPoint)server.Endpoint)
        {
            OptionKeepAlive = true,
            OptionTcpKeepAliveTime = 1,
            OptionTcpKeepAliveInterval = 1,
            OptionTcpKeepAliveRetryCount = 1,
        };
        Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout));
        await Wait.UntilAsync(() => server.ConnectedSessions == 1, "the server to accept the connection");
        Assert.True(client.IsConnected);
        Assert.True(await HarnessExtensions.RunBlocking(server.Stop).WaitAsync(s_timeout));
    }

    // --- 9. Receive after a disconnect ---

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Receive_after_Disconnect_returns_0(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        Assert.True(harness.Start());
        var probe = new Probe();
        using var client = harness.CreateClient(probe);
        Assert.True(await HarnessExtensions.RunBlocking(client.Connect).WaitAsync(s_timeout));
        Assert.True(await HarnessExtensions.RunBlocking(client.Disconnect).WaitAsync(s_timeout));

        var buffer = new byte[16];
        Assert.Equal(0, client.Receive(buffer));
        Assert.Equal(0, client.Receive(buffer, 4, 8));
        Assert.Equal(string.Empty, client.Receive(16));
        Assert.Equal(1, probe.DisconnectedCount);
    }

    // --- 10. Cancellation registrations of parked sends ---

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Parked_sends_released_by_the_flusher_leave_no_registration_on_their_token(TransportKind kind)
    {
        const int Cycles = 500; // how often a send parks depends on how fast the peer drains: on a loaded 2-core machine about one in a thousand
        await using var harness = new ServerHarness(kind);
        Assert.True(harness.Start());
        var (peer, session, _) = await harness.ConnectPeerAsync();
        using (peer)
        {
            // A small send limit and a small kernel send buffer: most sends park, and the flusher
            // releases them as the kernel takes the queued bytes.
            session.OptionSendBufferLimit = 16 * 1024;
            session.Socket!.SendBufferSize = 32 * 1024;
            using var stop = new CancellationTokenSource();
            var draining = DrainAsync(peer, 65536, slowly: false, stop.Token);

            // One token for every send, as a long-lived connection would use.
            using var cts = new CancellationTokenSource();
            var parked = await ParkAndReleaseAsync(session, Cycles, cts.Token);

            // A registration left on the token keeps its waiter, and so the send's task, alive.
            GC.Collect();
            GC.WaitForPendingFinalizers();
            GC.Collect();
            // (The last one is left out: the finished helper's state machine still holds it.)
            // A registration left behind keeps every one of them alive; a thread-pool thread may
            // still hold the last task or two it ran (seen once in a few hundred runs), so two are allowed.
            var alive = parked.Take(parked.Count - 1).Count(static weak => weak.TryGetTarget(out _));
            Assert.True(alive <= 2, $"{alive} of {parked.Count} released sends are still held by their cancellation registration.");

            // Cancelling now cancels nothing: every send was accepted, and the connection goes on.
            await cts.CancelAsync();
            Assert.True(session.IsConnected);
            Assert.True(await session.SendAsync(new byte[16].AsMemory(), CancellationToken.None).AsTask().WaitAsync(s_timeout));

            await stop.CancelAsync();
            await draining.WaitAsync(s_timeout);
        }
    }

    /// <summary>Sends until <paramref name="cycles"/> sends have parked for room; returns weak references to their tasks.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static async Task<List<WeakReference<Task<bool>>>> ParkAndReleaseAsync(StreamConnection connection, int cycles, CancellationToken token)
    {
        var parked = new List<WeakReference<Task<bool>>>(cycles);
        var chunk = new byte[4096].AsMemory();
        for (var i = 0; parked.Count < cycles; i++)
        {
            Assert.True(i < 5_000_000, $"Only {parked.Count} of five million sends parked."); // a peer that drains fast on an idle core lets few sends park: a fresh-clone run parked 426 in a million
            var send = connection.SendAsync(chunk, token);
            if (send.IsCompleted)
            {
                Assert.True(await send);
                continue;
            }

            var task = send.AsTask();
            parked.Add(new WeakReference<Task<bool>>(task));
            Assert.True(await task.WaitAsync(s_timeout, CancellationToken.None));
        }

        return parked;
    }
}
