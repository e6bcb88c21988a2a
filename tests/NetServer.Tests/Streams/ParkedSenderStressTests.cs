using System;
using System.Diagnostics;
using System.Linq;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Streams;

/// <summary>
/// Parked senders and the flusher under contention: a send limit of a few frames, blocking and
/// awaitable senders on threads of their own, awaitable senders that give up after a millisecond or
/// two, a peer that reads as fast as it can (so the queue often drains to empty while senders come
/// and go), and threads that spin in the same process so that any thread may be preempted between
/// two steps. Every send must end: a parked sender that nobody will ever release (a lost wake-up)
/// shows up as a send still waiting long after the queue drained.
/// </summary>
[Collection(nameof(ParkedSenderStressTests))]
public sealed class ParkedSenderStressTests(Xunit.Abstractions.ITestOutputHelper output)
{
    private static readonly TimeSpan s_run = TimeSpan.FromSeconds(3);
    private static readonly TimeSpan s_stuck = TimeSpan.FromSeconds(5);
    private const int SendLimit = 4 * 1024;
    private const int MaxFrame = 1500;

    // TCP only: the spinning threads load the whole machine for the run, and over a Unix socket
    // the loop never caught the lost wake-up it was written for (TCP: 2 runs in 4 without the fix).
    [Fact]
    public async Task Every_parked_sender_is_released_while_others_give_up_around_it()
    {
        await using var harness = new ServerHarness(TransportKind.Tcp);
        Assert.True(harness.Start());
        var (peer, session, _) = await harness.ConnectPeerAsync();
        using (peer)
        {
            session.OptionSendBufferLimit = SendLimit;
            session.Socket!.SendTimeout = (int)s_stuck.TotalMilliseconds; // a blocking Send stuck this long returns 0
            var connection = session.CurrentConnection!;

            long received = 0;
            using var stopReading = new CancellationTokenSource();
            var reading = Task.Run(async () =>
            {
                var buffer = new byte[64 * 1024];
                try
                {
                    while (true)
                    {
                        var n = await peer.ReceiveAsync(buffer, SocketFlags.None, stopReading.Token);
                        if (n == 0)
                            return;
                        Interlocked.Add(ref received, n);
                    }
                }
                catch (OperationCanceledException)
                {
                }
            });

            using var stopHogs = new CancellationTokenSource();
            var hogs = Enumerable.Range(0, Environment.ProcessorCount).Select(_ => Task.Factory.StartNew(
                () =>
                {
                    while (!stopHogs.IsCancellationRequested)
                        Thread.SpinWait(5000);
                },
                CancellationToken.None,
                TaskCreationOptions.LongRunning,
                TaskScheduler.Default)).ToArray();

            var stats = new Stats();
            var deadline = Stopwatch.StartNew();
            try
            {
                // Two blocking Send, two awaitable sends, four awaitable sends that give up after 1-2 ms.
                var senders = Enumerable.Range(0, 8).Select(i => Task.Factory.StartNew(
                    () => SendUntilAsync(session, connection, new[] { 0, 1, 2, 2 }[i % 4], new Random(i), deadline, stats),
                    CancellationToken.None,
                    TaskCreationOptions.LongRunning,
                    TaskScheduler.Default).Unwrap()).ToArray();
                await Task.WhenAll(senders).WaitAsync(s_run + s_stuck + s_stuck);
            }
            finally
            {
                stopHogs.Cancel();
                await Task.WhenAll(hogs);
            }

            output.WriteLine(stats.ToString());
            await Wait.UntilAsync(() => Interlocked.Read(ref received) == stats.AcceptedBytes, () => $"the peer to read every accepted byte ({Interlocked.Read(ref received)} of {stats.AcceptedBytes})");
            Assert.True(stats.Parked > 100, $"Only {stats.Parked} sends parked: the limit did not bite.");
            Assert.True(stats.GaveUp > 10, $"Only {stats.GaveUp} sends gave up while parked.");
            Assert.True(session.IsConnected, $"The session closed ({session.DisconnectReason}).");
            Assert.Equal(0, connection.ParkedSenders);
            stopReading.Cancel();
            await reading.WaitAsync(Wait.Default);
        }
    }

    private static async Task SendUntilAsync(StreamSession session, NetServer.Streams.Connection connection, int mode, Random random, Stopwatch deadline, Stats stats)
    {
        var frame = new byte[MaxFrame];
        random.NextBytes(frame);
        while (deadline.Elapsed < s_run)
        {
            var size = random.Next(1, MaxFrame + 1);
            if (mode == 0)
            {
                var sent = session.Send(frame, 0, size);
                Assert.True(sent == size, $"A blocking Send returned {sent} of {size} bytes: {State(session, connection)}");
                stats.Accepted(size);
                continue;
            }

            using var giveUp = mode == 2 ? new CancellationTokenSource(TimeSpan.FromMilliseconds(random.Next(1, 3))) : null;
            var sending = session.SendAsync(frame.AsMemory(0, size), giveUp?.Token ?? CancellationToken.None);
            if (!sending.IsCompleted)
                stats.Park();
            bool accepted;
            try
            {
                accepted = await sending.AsTask().WaitAsync(s_stuck);
            }
            catch (OperationCanceledException) when (giveUp is { IsCancellationRequested: true })
            {
                stats.GiveUp();
                continue;
            }
            catch (TimeoutException)
            {
                Assert.Fail($"An awaitable send waited {s_stuck.TotalSeconds} s: {State(session, connection)}");
                throw;
            }

            Assert.True(accepted, $"An awaitable send failed: {State(session, connection)}");
            stats.Accepted(size);
        }
    }

    private static string State(StreamSession session, NetServer.Streams.Connection connection) =>
        $"connected {session.IsConnected}, {session.BytesPending} bytes pending, {connection.ParkedSenders} senders parked";

    private sealed class Stats
    {
        private long _acceptedBytes;
        private long _parked;
        private long _gaveUp;

        public long AcceptedBytes => Interlocked.Read(ref _acceptedBytes);

        public long Parked => Interlocked.Read(ref _parked);

        public long GaveUp => Interlocked.Read(ref _gaveUp);

        public void Accepted(int bytes) => Interlocked.Add(ref _acceptedBytes, bytes);

        public void Park() => Interlocked.Increment(ref _parked);

        public void GiveUp() => Interlocked.Increment(ref _gaveUp);

        public override string ToString() => $"accepted {AcceptedBytes} bytes, parked {Parked}, gave up {GaveUp}";
    }
}
