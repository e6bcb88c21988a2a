using System;
using System.Threading;

namespace KestrelReference;

/// <summary>
/// Requests and WebSocket messages served, and the bytes this process allocated meanwhile
/// (GC.GetTotalAllocatedBytes, every thread): Kestrel's cost per request, with this program's
/// handlers, which allocate nothing for a GET or a TRACE.
/// </summary>
internal sealed class TrafficStats : IDisposable
{
    private readonly Timer? _timer;
    private long _requests;
    private long _messages;
    private long _firstAllocated = -1;
    private long _lastRequests;
    private long _lastMessages;
    private long _lastAllocated;

    public TrafficStats(bool print)
    {
        if (print)
            _timer = new Timer(_ => PrintSecond(), null, TimeSpan.FromSeconds(1), TimeSpan.FromSeconds(1));
    }

    public void CountRequest()
    {
        // The first request starts the count, so start-up (host, Kestrel, JIT before traffic) is left out.
        if (Interlocked.Increment(ref _requests) == 1 && _timer is not null)
            Interlocked.CompareExchange(ref _firstAllocated, GC.GetTotalAllocatedBytes(precise: true), -1);
    }

    public void CountMessage() => Interlocked.Increment(ref _messages);

    /// <summary>The totals since the first request (with --stats).</summary>
    public void PrintTotals()
    {
        if (_timer is null)
            return;

        _timer.Dispose();
        var first = Interlocked.Read(ref _firstAllocated);
        var allocated = first < 0 ? 0 : GC.GetTotalAllocatedBytes(precise: true) - first;
        Console.Error.WriteLine($"total: {Line(Interlocked.Read(ref _requests), Interlocked.Read(ref _messages), allocated)}");
    }

    public void Dispose() => _timer?.Dispose();

    private void PrintSecond()
    {
        var requests = Interlocked.Read(ref _requests);
        var messages = Interlocked.Read(ref _messages);
        var allocated = GC.GetTotalAllocatedBytes(precise: true);
        var second = Line(requests - _lastRequests, messages - _lastMessages, allocated - _lastAllocated);
        var quiet = requests == _lastRequests && messages == _lastMessages;
        (_lastRequests, _lastMessages, _lastAllocated) = (requests, messages, allocated);
        if (!quiet)
            Console.Error.WriteLine($"second: {second}");
    }

    private static string Line(long requests, long messages, long allocated)
    {
        var units = requests + messages;
        var perUnit = units == 0 ? 0 : (double)allocated / units;
        return $"{requests} requests, {messages} ws messages, {allocated} B allocated, {perUnit:F1} B per request or message";
    }
}
