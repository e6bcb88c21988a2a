using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Diagnostics;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Buffers;
using Xunit;

namespace NetServer.Tests.Infrastructure;

/// <summary>
/// A buffer pool that remembers every array it lends out (with the stack that rented it) and
/// fails the test when one is returned twice, returned without being rented, or never returned.
/// A returned array is filled with <see cref="Poison"/>: bytes read from it after its return (sent
/// or delivered by an owner that gave it back too early) show up as a run of that byte.
/// </summary>
internal sealed class LeakCheckingBufferPool : BufferPool
{
    private readonly ConcurrentDictionary<byte[], string> _outstanding = new(ReferenceEqualityComparer.Instance);
    private long _outstandingBytes;
    private long _peakOutstandingBytes;
    private long _rents;
    private long _returns;
    private long _rentedBytes;
    private volatile string? _misuse;

    public long Rents => Interlocked.Read(ref _rents);

    public long Returns => Interlocked.Read(ref _returns);

    /// <summary>Total bytes of all arrays ever rented (to show what a multicast costs).</summary>
    public long RentedBytes => Interlocked.Read(ref _rentedBytes);

    public int Outstanding => _outstanding.Count;

    /// <summary>Bytes of the arrays lent out and not returned yet: the memory the engine holds now.</summary>
    public long OutstandingBytes => Interlocked.Read(ref _outstandingBytes);

    /// <summary>The most <see cref="OutstandingBytes"/> ever held at once (since the last <see cref="ResetPeak"/>).</summary>
    public long PeakOutstandingBytes => Interlocked.Read(ref _peakOutstandingBytes);

    public void ResetPeak() => Interlocked.Exchange(ref _peakOutstandingBytes, OutstandingBytes);

    /// <summary>Skip the rent's stack trace (for tests that rent a great deal; leaks are still found, without their origin).</summary>
    public bool CaptureStacks { get; set; } = true;

    public override byte[] Rent(int minimumLength)
    {
        // Fresh arrays, so a use after return shows up as an unknown array rather than silently working.
        var array = new byte[Math.Max(minimumLength, 1)];
        _outstanding[array] = CaptureStacks ? Environment.StackTrace : "(stack not captured)";
        Interlocked.Increment(ref _rents);
        Interlocked.Add(ref _rentedBytes, array.Length);
        var held = Interlocked.Add(ref _outstandingBytes, array.Length);
        long peak;
        while (held > (peak = Interlocked.Read(ref _peakOutstandingBytes)) && Interlocked.CompareExchange(ref _peakOutstandingBytes, held, peak) != peak)
        {
        }

        return array;
    }

    /// <summary>What a returned array is filled with.</summary>
    public const byte Poison = 0xDD;

    public override void Return(byte[] array)
    {
        Array.Fill(array, Poison);
        Interlocked.Increment(ref _returns);
        if (_outstanding.TryRemove(array, out _))
            Interlocked.Add(ref _outstandingBytes, -array.Length);
        else
            _misuse ??= $"An array of {array.Length} bytes was returned that is not rented (double return?):{Environment.NewLine}{Environment.StackTrace}";
    }

    /// <summary>Waits (bounded) until every rented array is back, then fails the test if any is missing or was misused.</summary>
    public async Task AssertAllReturnedAsync(TimeSpan? timeout = null)
    {
        var watch = Stopwatch.StartNew();
        var limit = timeout ?? TimeSpan.FromSeconds(10);
        while (!_outstanding.IsEmpty && watch.Elapsed < limit)
            await Task.Delay(10);

        Assert.True(_misuse is null, _misuse);
        if (!_outstanding.IsEmpty)
        {
            var first = _outstanding.First();
            Assert.Fail($"{_outstanding.Count} rented buffer(s) were never returned; the first ({first.Key.Length} bytes) was rented at:{Environment.NewLine}{first.Value}");
        }
    }
}
