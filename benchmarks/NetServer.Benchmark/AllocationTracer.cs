using System;
using System.Collections.Concurrent;
using System.Diagnostics.Tracing;
using System.Globalization;
using System.Linq;

namespace NetServer.Benchmark;

/// <summary>
/// With --trace-allocations: samples the runtime's AllocationTick events (one per ~100 KB
/// allocated) and prints which types were allocated most, to find what a non-zero
/// "B/msg" figure is made of. The samples start over when the measured window starts
/// (<see cref="StartWindow"/>), so start-up, connects and handshakes stay out of them.
/// </summary>
internal sealed class AllocationTracer : EventListener
{
    private const int AllocationTickEvent = 10;
    private readonly ConcurrentDictionary<string, long> _bytesByType = new();
    private volatile bool _windowed;

    /// <summary>The tracer of this run, if --trace-allocations.</summary>
    public static AllocationTracer? Current { get; set; }

    /// <summary>Drops the samples so far: the measured window starts now.</summary>
    public void StartWindow()
    {
        _bytesByType.Clear();
        _windowed = true;
    }

    protected override void OnEventSourceCreated(EventSource eventSource)
    {
        if (eventSource.Name == "Microsoft-Windows-DotNETRuntime")
            EnableEvents(eventSource, EventLevel.Verbose, (EventKeywords)0x1); // GC keyword
    }

    protected override void OnEventWritten(EventWrittenEventArgs e)
    {
        if (e.EventId != AllocationTickEvent || e.Payload is null || e.PayloadNames is null)
            return;
        var type = e.Payload[e.PayloadNames.IndexOf("TypeName")]?.ToString() ?? "?";

        // An array's size says whose it is (a pool's 16 KiB chunk, a 64 KiB receive buffer...): arrays are told apart by it.
        var size = e.PayloadNames.IndexOf("ObjectSize");
        if (size >= 0 && type.EndsWith("[]", StringComparison.Ordinal))
            type = string.Create(CultureInfo.InvariantCulture, $"{type} of {e.Payload[size]} B");
        var amount = Convert.ToInt64(e.Payload[e.PayloadNames.IndexOf("AllocationAmount64")], CultureInfo.InvariantCulture);
        _bytesByType.AddOrUpdate(type, amount, (_, total) => total + amount);
    }

    public void Print()
    {
        Console.WriteLine($"Allocation samples by type (about 100 KB per sample), {(_windowed ? "in the measured window" : "of the whole run")}:");
        foreach (var (type, bytes) in _bytesByType.OrderByDescending(p => p.Value).Take(15))
            Console.WriteLine($"  {Report.FormatBytes(bytes),12}  {type}");
    }
}
