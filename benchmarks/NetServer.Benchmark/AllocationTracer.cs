using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Diagnostics.Tracing;
using System.Globalization;
using System.Linq;

namespace NetServer.Benchmark;

/// <summary>
/// With --trace-allocations: samples the runtime's AllocationTick events (one per ~100 KB
/// allocated) and prints which types were allocated most, to find what a non-zero
/// "B/msg" figure is made of. The samples start over when the measured window starts
/// (<see cref="StartWindow"/>), so start-up, connects and handshakes stay out of them.
/// It also names where <c>ArrayPool&lt;byte&gt;.Shared</c> missed: the pool's BufferAllocated
/// events (a rent that found none to reuse) come on the renting thread, so their call stacks say
/// whose buffers the pool did not keep.
/// </summary>
internal sealed class AllocationTracer : EventListener
{
    private const int AllocationTickEvent = 10;
    private const int BufferAllocatedEvent = 2;
    private const string PoolMiss = "@"; // keys of pool misses (a call stack), beside the type names
    private readonly ConcurrentDictionary<string, long> _bytesByType = new();
    private volatile bool _windowed;
    private static readonly int s_bytePool = System.Buffers.ArrayPool<byte>.Shared.GetHashCode(); // the pool's id in its events

    [ThreadStatic]
    private static bool t_inPoolEvent; // building the key rents from the char pool, which raises events too

    private volatile bool _ended;

    /// <summary>The tracer of this run, if --trace-allocations.</summary>
    public static AllocationTracer? Current { get; set; }

    /// <summary>Drops the samples so far: the measured window starts now.</summary>
    public void StartWindow()
    {
        _bytesByType.Clear();
        _windowed = true;
    }

    /// <summary>The samples of the window so far, by type.</summary>
    public Dictionary<string, long> Snapshot() => new(_bytesByType);

    /// <summary>The window ended at an earlier <see cref="Snapshot"/>: what was sampled since is dropped, and no more is counted.</summary>
    public void EndWindow(Dictionary<string, long> snapshot)
    {
        _ended = true;
        _bytesByType.Clear();
        foreach (var (type, bytes) in snapshot)
            _bytesByType[type] = bytes;
    }

    protected override void OnEventSourceCreated(EventSource eventSource)
    {
        if (eventSource.Name == "Microsoft-Windows-DotNETRuntime")
            EnableEvents(eventSource, EventLevel.Verbose, (EventKeywords)0x1); // GC keyword
        else if (eventSource.Name == "System.Buffers.ArrayPoolEventSource")
            EnableEvents(eventSource, EventLevel.Informational); // allocations, trims and drops; not every rent and return
    }

    protected override void OnEventWritten(EventWrittenEventArgs e)
    {
        if (_ended || e.Payload is null || e.PayloadNames is null)
            return;
        if (e.EventSource.Name == "System.Buffers.ArrayPoolEventSource")
        {
            if (e.EventId == BufferAllocatedEvent && !t_inPoolEvent && Equals(e.Payload[e.PayloadNames.IndexOf("poolId")], s_bytePool))
            {
                t_inPoolEvent = true;
                try
                {
                    var length = Convert.ToInt64(e.Payload[e.PayloadNames.IndexOf("bufferSize")], CultureInfo.InvariantCulture);
                    var key = string.Create(CultureInfo.InvariantCulture, $"{PoolMiss}{length} B {e.Payload[e.PayloadNames.IndexOf("reason")]}: {Caller()}");
                    _bytesByType.AddOrUpdate(key, length, (_, total) => total + length);
                }
                finally
                {
                    t_inPoolEvent = false;
                }
            }

            return;
        }

        if (e.EventId != AllocationTickEvent)
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
        foreach (var (type, bytes) in _bytesByType.Where(p => !p.Key.StartsWith(PoolMiss, StringComparison.Ordinal)).OrderByDescending(p => p.Value).Take(15))
            Console.WriteLine($"  {Report.FormatBytes(bytes),12}  {type}");
        Console.WriteLine("Arrays ArrayPool<byte>.Shared allocated (every one), by size and caller:");
        foreach (var (caller, bytes) in _bytesByType.Where(p => p.Key.StartsWith(PoolMiss, StringComparison.Ordinal)).OrderByDescending(p => p.Value).Take(15))
            Console.WriteLine($"  {Report.FormatBytes(bytes),12}  {caller.Substring(PoolMiss.Length)}");
    }

    /// <summary>The renting thread's frames above the pool, innermost first.</summary>
    private static string Caller()
    {
        var frames = new System.Diagnostics.StackTrace(2, false).GetFrames()
            .Select(f => f.GetMethod())
            .Where(m => m?.DeclaringType is { } t && !t.FullName!.StartsWith("System.Diagnostics.Tracing", StringComparison.Ordinal)
                && !t.FullName.StartsWith("System.Buffers.", StringComparison.Ordinal) && t != typeof(AllocationTracer))
            .Take(6)
            .Select(m => $"{m!.DeclaringType!.Name}.{m.Name}");
        return string.Join(" < ", frames);
    }
}
