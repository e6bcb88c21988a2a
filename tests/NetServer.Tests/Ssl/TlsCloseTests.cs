using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Ssl;

/// <summary>
/// Closing a TLS connection from our side while bytes flow both ways: the close_notify goes out
/// while the receive loop is reading (the layer's shutdown must never run while a read decrypts),
/// and nothing is corrupted or lost on the way. Many connections close at random moments of
/// their traffic, half of them from the session, half from the client. The TLS layer is the
/// library's with probes (<see cref="WatchedTlsLayer"/>) that catch a shutdown overlapping a
/// decryption, which OpenSSL itself shows only rarely.
/// </summary>
public class TlsCloseTests
{
    private const int Rounds = 4;
    private const int ConnectionsPerRound = 16;

    // Over one TLS record, so a write is two records and reads see partial ones.
    private const int ChunkSize = (16 * 1024) + 100;

    [Fact]
    public async Task Connections_closing_first_while_data_flows_both_ways_lose_and_corrupt_nothing()
    {
        await using var harness = new ServerHarness(TransportKind.Ssl);
        var watch = new LayerWatch();
        ((ProbeSslServer)harness.Server).SessionLayer = (context, host) => new WatchedTlsLayer(context, host, watch);
        var sessionPumps = new Dictionary<Guid, Pump>();
        harness.Probe.ConfigureSession = probe =>
        {
            var pump = new Pump(probe);
            probe.Connected = session =>
            {
                lock (sessionPumps)
                    sessionPumps[session.Id] = pump;
            };
        };
        Assert.True(harness.Start());

        var random = new Random(20261122);
        for (var round = 0; round < Rounds; round++)
        {
            var ends = new List<(Pump Client, StreamClient ClientConnection, Pump Session, StreamSession SessionConnection)>();
            try
            {
                for (var i = 0; i < ConnectionsPerRound; i++)
                {
                    var probe = new Probe();
                    var pump = new Pump(probe);
                    var client = (ProbeSslClient)harness.CreateClient(probe);
                    client.Layer = (context, host) => new WatchedTlsLayer(context, host, watch);
                    client.OptionDisconnectTimeout = Timeout.InfiniteTimeSpan; // a close that hangs fails the test instead of being cut short
                    Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(Wait.Default));
                    ends.Add((pump, client, null!, null!));
                }

                // Pair each client with its session (the session's server-side id is not the client's).
                await harness.Probe.WaitForSessionsAsync(ConnectionsPerRound * (round + 1));
                for (var i = 0; i < ends.Count; i++)
                {
                    var local = ends[i].ClientConnection.Socket!.LocalEndPoint!.ToString();
                    var session = harness.Probe.Sessions.Keys
                        .Select(harness.FindSession)
                        .Single(s => s is not null && s.Socket?.RemoteEndPoint?.ToString() == local)!;
                    session.OptionDisconnectTimeout = Timeout.InfiniteTimeSpan;
                    Pump sessionPump;
                    lock (sessionPumps)
                        sessionPump = sessionPumps[session.Id];
                    ends[i] = (ends[i].Client, ends[i].ClientConnection, sessionPump, session);
                }

                // Every connection is up before the traffic starts.
                await Wait.UntilAsync(() => ends.All(e => e.Session.ReadyForTraffic && e.Client.ReadyForTraffic), "every connection to be ready");
                foreach (var (clientPump, client, sessionPump, session) in ends)
                {
                    clientPump.Start(client);
                    sessionPump.Start(session);
                }

                await Wait.UntilAsync(() => ends.All(e => e.Session.Received > 0 && e.Client.Received > 0), "traffic both ways on every connection");

                // Close each at its own random moment, the session or the client first, as the traffic goes on.
                var closes = ends.Select((e, i) => CloseLaterAsync(i % 2 == 0 ? e.SessionConnection : e.ClientConnection, random.Next(0, 40))).ToArray();
                Assert.DoesNotContain(false, await Task.WhenAll(closes).WaitAsync(Wait.Default));

                for (var i = 0; i < ends.Count; i++)
                {
                    var (clientPump, client, sessionPump, session) = ends[i];
                    var sessionCloses = i % 2 == 0;
                    var (closer, closerPump, peer, peerPump) = sessionCloses
                        ? ((StreamConnection)session, sessionPump, (StreamConnection)client, clientPump)
                        : (client, clientPump, session, sessionPump);
                    var what = $"Round {round}, connection {i} ({(sessionCloses ? "session" : "client")} closes)";

                    Assert.Equal(DisconnectReason.LocalDisconnect, await closerPump.Disconnected.Task.WaitAsync(Wait.Default));
                    Assert.Equal(DisconnectReason.PeerClosed, await peerPump.Disconnected.Task.WaitAsync(Wait.Default));

                    // No decryption error on either side (a stream error is kept even while closing), no OnError.
                    Assert.True(closer.DisconnectException is null, $"{what}: the closing side failed: {closer.DisconnectException}");
                    Assert.True(peer.DisconnectException is null, $"{what}: the peer failed: {peer.DisconnectException}");
                    Assert.True(clientPump.Errors.IsEmpty && sessionPump.Errors.IsEmpty, $"{what}: OnError: {string.Join(",", clientPump.Errors.Concat(sessionPump.Errors))}");

                    // Every byte either side received is the other's pattern, in order; every byte
                    // the closing side's sends accepted reached its peer (the peer's last bytes may
                    // cross the close and be dropped by the closing side, which no longer delivers).
                    Assert.True(clientPump.Corruption is null, $"{what}: {clientPump.Corruption}");
                    Assert.True(sessionPump.Corruption is null, $"{what}: {sessionPump.Corruption}");
                    Assert.True(closerPump.Accepted == peerPump.Received, $"{what}: the closing side's sends accepted {closerPump.Accepted} bytes, its peer received {peerPump.Received}.");
                    Assert.True(peerPump.Accepted >= closerPump.Received, $"{what}: the closing side received {closerPump.Received} bytes, more than its peer sent ({peerPump.Accepted}).");
                }
            }
            finally
            {
                foreach (var end in ends)
                    end.ClientConnection.Dispose();
            }
        }

        // Each connection ended with a close_notify each way, none sent while a read decrypted.
        const int Connections = Rounds * ConnectionsPerRound;
        Assert.Equal(0, watch.Overlapped);
        Assert.Equal(0, watch.Failed);
        Assert.Equal(2 * Connections, watch.Shutdowns);
        Assert.Equal(2 * Connections, watch.CloseNotifies);
        Assert.Equal(0, watch.BareEnds);
    }

    [Fact]
    public async Task A_close_while_a_read_holds_bytes_it_has_not_decrypted_sends_close_notify_after_that_read()
    {
        await using var harness = new ServerHarness(TransportKind.Ssl);
        var sessionWatch = new LayerWatch();
        var clientWatch = new LayerWatch();
        ((ProbeSslServer)harness.Server).SessionLayer = (context, host) => new WatchedTlsLayer(context, host, sessionWatch);
        Assert.True(harness.Start());

        var probe = new Probe();
        using var client = (ProbeSslClient)harness.CreateClient(probe);
        client.Layer = (context, host) => new WatchedTlsLayer(context, host, clientWatch);
        Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(Wait.Default));
        await harness.Probe.WaitForSessionsAsync(1);
        var sessionProbe = harness.Probe.Sessions.Values.Single();
        var session = harness.FindSession(harness.Probe.Sessions.Keys.Single())!;

        // Hold the session's reader as its next bytes come from the socket, before it decrypts them.
        using var release = new ManualResetEventSlim();
        var held = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var armed = 1;
        sessionWatch.BytesArrived = () =>
        {
            if (Interlocked.Exchange(ref armed, 0) != 1)
                return;
            held.TrySetResult();
            release.Wait(Wait.Default);
        };
        Assert.True(client.SendAsync(Framing.Pattern(0, 1000)));
        await held.Task.WaitAsync(Wait.Default);

        // The session closes meanwhile from another thread: its shutdown must wait for that read.
        var closing = HarnessExtensions.RunBlocking(session.Disconnect);
        try
        {
            await Wait.UntilAsync(() => sessionProbe.Events.Contains("disconnecting"), "the close to start");
            await Task.Delay(100);
            Assert.Equal(0, sessionWatch.Shutdowns);
        }
        finally
        {
            release.Set();
        }

        Assert.True(await closing.WaitAsync(Wait.Default));
        Assert.Equal(DisconnectReason.LocalDisconnect, await sessionProbe.DisconnectedSignal.Task.WaitAsync(Wait.Default));
        Assert.Equal(DisconnectReason.PeerClosed, await probe.DisconnectedSignal.Task.WaitAsync(Wait.Default));
        Assert.Equal(0, sessionWatch.Overlapped);
        Assert.Equal(1, sessionWatch.Shutdowns);
        Assert.Equal(1, clientWatch.CloseNotifies); // the client read the session's close_notify...
        Assert.Equal(1, sessionWatch.CloseNotifies); // ...and answered with its own
        Assert.Null(session.DisconnectException);
        Assert.Null(client.DisconnectException);
    }

    /// <summary>Waits <paramref name="delayMilliseconds"/>, then disconnects gracefully; true once OnDisconnected has run.</summary>
    private static async Task<bool> CloseLaterAsync(StreamConnection connection, int delayMilliseconds)
    {
        await Task.Delay(delayMilliseconds);
        return await connection.DisconnectAsync(CancellationToken.None);
    }

    /// <summary>
    /// One end of a connection that keeps bytes flowing both ways without flooding: it starts with
    /// a window of its own pattern stream, then answers every chunk it receives with as many bytes
    /// of its pattern (so about one window is in flight each way). It counts the bytes its sends
    /// accepted and checks that what it receives is the other end's pattern stream.
    /// </summary>
    private sealed class Pump
    {
        private const int Window = 4 * ChunkSize;

        private readonly object _sending = new();
        private readonly byte[] _chunk = new byte[64 * 1024]; // the largest read OnReceived gets by default
        private long _accepted;
        private long _received;
        private bool _emptied;

        public Pump(Probe probe)
        {
            probe.Empty = _ => Volatile.Write(ref _emptied, true);
            probe.Received = Receive;
            probe.Error = (_, error) => Errors.Enqueue(error.ToString());
            probe.Disconnected = (_, reason) => Disconnected.TrySetResult(reason);
        }

        /// <summary>OnEmpty has run (after the handshake): the connection takes sends.</summary>
        public bool ReadyForTraffic => Volatile.Read(ref _emptied);

        public long Accepted => Interlocked.Read(ref _accepted);

        public long Received => Interlocked.Read(ref _received);

        public string? Corruption { get; private set; }

        public System.Collections.Concurrent.ConcurrentQueue<string> Errors { get; } = new();

        public TaskCompletionSource<DisconnectReason> Disconnected { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        /// <summary>Sends the first window; what arrives keeps the traffic going.</summary>
        public void Start(StreamConnection connection)
        {
            for (var sent = 0; sent < Window; sent += ChunkSize)
                Send(connection, ChunkSize);
        }

        // From Start and from OnReceived, which may overlap: one send (and its accounting) at a time.
        private void Send(StreamConnection connection, int count)
        {
            lock (_sending)
            {
                var position = Interlocked.Read(ref _accepted);
                Framing.FillPattern(_chunk.AsSpan(0, count), position);
                if (connection.SendAsync(_chunk, 0, count))
                    Interlocked.Exchange(ref _accepted, position + count);
            }
        }

        // OnReceived never runs concurrently with itself.
        private void Receive(StreamConnection connection, byte[] buffer, long offset, long size)
        {
            var position = Interlocked.Read(ref _received);
            var mismatch = Framing.FindPatternMismatch(buffer.AsSpan((int)offset, (int)size), position);
            if (mismatch >= 0 && Corruption is null)
                Corruption = $"Byte {position + mismatch} of the received stream is not the pattern.";
            Interlocked.Exchange(ref _received, position + size);
            Send(connection, (int)Math.Min(size, _chunk.Length));
        }
    }
}
