using System.Net;
using System.Threading;
using BenchmarkDotNet.Attributes;
using NetServer.Internal;

namespace NetServer.MicroBenchmarks;

/// <summary>
/// Two threads at once, each updating a different counter of one object, as a UDP socket's
/// flusher (sent counters) and receive loop (received counters) do: counters on one cache line
/// (<see cref="Adjacent"/>, the old layout) against counters on lines of their own
/// (<see cref="Padded"/>), and the real <see cref="UdpServer"/> counters. The time is per update
/// of one thread; both run together. Needs two free cores to show anything.
/// </summary>
#pragma warning disable CA1001 // The server is never started; GlobalCleanup disposes it all the same.
public class CounterBenchmarks
#pragma warning restore CA1001
{
    private const int Updates = 2_000_000;

    private AdjacentCounters _adjacent = null!;
    private PaddedCounters _padded = null!;
    private UdpServer _server = null!;

    [GlobalSetup]
    public void Setup()
    {
        _adjacent = new AdjacentCounters();
        _padded = new PaddedCounters();
        _server = new UdpServer(IPAddress.Loopback, 0);
    }

    [GlobalCleanup]
    public void Cleanup() => _server.Dispose();

    [Benchmark(Baseline = true, OperationsPerInvoke = Updates)]
    public void Adjacent() => RunTogether(
        () =>
        {
            for (var i = 0; i < Updates; i++)
            {
                Interlocked.Add(ref _adjacent.BytesSent, 64);
                Interlocked.Increment(ref _adjacent.DatagramsSent);
            }
        },
        () =>
        {
            for (var i = 0; i < Updates; i++)
            {
                Interlocked.Add(ref _adjacent.BytesReceived, 64);
                Interlocked.Increment(ref _adjacent.DatagramsReceived);
            }
        });

    [Benchmark(OperationsPerInvoke = Updates)]
    public void Padded() => RunTogether(
        () =>
        {
            for (var i = 0; i < Updates; i++)
            {
                _padded.BytesSent.Add(64);
                _padded.DatagramsSent.Increment();
            }
        },
        () =>
        {
            for (var i = 0; i < Updates; i++)
            {
                _padded.BytesReceived.Add(64);
                _padded.DatagramsReceived.Increment();
            }
        });

    [Benchmark(OperationsPerInvoke = Updates)]
    public void UdpServerCounters() => RunTogether(
        () =>
        {
            for (var i = 0; i < Updates; i++)
                _server.CountSent(64);
        },
        () =>
        {
            for (var i = 0; i < Updates; i++)
                _server.CountReceived(64);
        });

    /// <summary>Runs both loops on threads of their own, started together.</summary>
    private static void RunTogether(ThreadStart first, ThreadStart second)
    {
        using var start = new Barrier(2);
        var other = new Thread(() =>
        {
            start.SignalAndWait();
            second();
        });
        other.Start();
        start.SignalAndWait();
        first();
        other.Join();
    }

    /// <summary>The counters as UdpPeer kept them before: four longs side by side.</summary>
    private sealed class AdjacentCounters
    {
        public long BytesSent;
        public long BytesReceived;
        public long DatagramsSent;
        public long DatagramsReceived;
    }

    private sealed class PaddedCounters
    {
        public PaddedCounter BytesSent;
        public PaddedCounter BytesReceived;
        public PaddedCounter DatagramsSent;
        public PaddedCounter DatagramsReceived;
    }
}
