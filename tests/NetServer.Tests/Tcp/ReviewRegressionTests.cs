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
/// Regressions for the bugs an independent review found: a hook that ends its connection in the
/// middle of a flush; Stop during a multicast; a failing CreateSession; a reconnect that overtakes
/// the previous connection's OnDisconnected; a blocking Send that reports bytes it never sent;
/// multicasts that overtake OnConnected; OnEmpty racing OnSent; keep-alive values the system
/// refuses; Receive after a disconnect; cancellation registrations left on a long-lived token.
/// </summary>
public partial class ReviewRegressionTests
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
}
