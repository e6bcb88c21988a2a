using System;
using System.Buffers;
using System.Collections.Concurrent;
using System.Diagnostics;
using System.Diagnostics.Tracing;
using System.Globalization;
using System.Linq;

namespace NetServer.P2P.Tests.Infrastructure;

/// <summary>
/// Names what a process allocated while a test measured it: the runtime's AllocationTick samples
/// (one per ~100 KB, by type) and every array <c>ArrayPool&lt;byte&gt;.Shared</c> had to allocate,
/// with the renting thread's call stack (the pool's events come on that thread). It allocates only
/// when those events come, so a window that allocates nothing stays at nothing.
/// </summary>
internal sealed class AllocationProbe : EventListener
{
    private const int AllocationTick = 10;
    private const int BufferAllocated = 2;
    private static readonly int s_bytePool = ArrayPool<byte>.Shared.GetHashCode();

    [ThreadStatic]
    private static bool t_inEvent; // the key's string rents from the char pool, which raises events too

    private readonly ConcurrentDictionary<string, long> _bytes = new();

    public void Clear() => _bytes.Clear();

    /// <summary>The largest entries, one a line.</summary>
    public string Describe(int count = 8) => string.Join(Environment.NewLine,
        _bytes.OrderByDescending(p => p.Value).Take(count).Select(p => string.Create(CultureInfo.InvariantCulture, $"  {p.Value,10} B  {p.Key}")));

    protected override void OnEventSourceCreated(EventSource source)
    {
        if (source.Name == "Microsoft-Windows-DotNETRuntime")
            EnableEvents(source, EventLevel.Verbose, (EventKeywords)0x1); // GC
        else if (source.Name == "System.Buffers.ArrayPoolEventSource")
            EnableEvents(source, EventLevel.Informational);
    }

    protected override void OnEventWritten(EventWrittenEventArgs e)
    {
        if (t_inEvent || e.Payload is null || e.PayloadNames is null)
            return;
        t_inEvent = true;
        try
        {
            if (e.EventSource.Name == "System.Buffers.ArrayPoolEventSource")
            {
                if (e.EventId == BufferAllocated && Equals(e.Payload[e.PayloadNames.IndexOf("poolId")], s_bytePool))
                {
                    var size = Convert.ToInt64(e.Payload[e.PayloadNames.IndexOf("bufferSize")], CultureInfo.InvariantCulture);
                    _bytes.AddOrUpdate($"pool miss {size} B: {Caller()}", size, (_, total) => total + size);
                }
            }
            else if (e.EventId == AllocationTick)
            {
                var type = e.Payload[e.PayloadNames.IndexOf("TypeName")]?.ToString() ?? "?";
                var amount = Convert.ToInt64(e.Payload[e.PayloadNames.IndexOf("AllocationAmount64")], CultureInfo.InvariantCulture);
                _bytes.AddOrUpdate($"sampled {type}", amount, (_, total) => total + amount);
            }
        }
        finally
        {
            t_inEvent = false;
        }
    }

    private static string Caller() => string.Join(" < ", new StackTrace(2, false).GetFrames()
        .Select(f => f.GetMethod())
        .Where(m => m?.DeclaringType is { } t && !t.FullName!.StartsWith("System.Diagnostics.Tracing", StringComparison.Ordinal)
            && !t.FullName.StartsWith("System.Buffers.", StringComparison.Ordinal) && t != typeof(AllocationProbe))
        .Take(5)
        .Select(m => $"{m!.DeclaringType!.Name}.{m.Name}"));
}
