using System.Runtime.InteropServices;

namespace NetServer.Internal;

/// <summary>
/// A 64-bit statistics counter alone on its cache line: counters that different threads update
/// (a socket's receive loop and its flusher, or sessions on many threads) no longer invalidate
/// each other's line on every update. Updates are atomic and reads exact, as before.
/// </summary>
/// <remarks>
/// The value sits 64 bytes into a 128-byte struct, so neither a neighbouring field nor another
/// counter shares its 64-byte line, and two counters side by side are 128 bytes apart (also apart
/// on 128-byte-line processors and under adjacent-line prefetch). A mutable struct: keep it in a
/// field that is not readonly and call its methods on the field itself, never on a copy.
/// </remarks>
[StructLayout(LayoutKind.Explicit, Size = 2 * LineSize)]
internal struct PaddedCounter
{
    private const int LineSize = 64;

    [FieldOffset(LineSize)]
    private long _value;

    /// <summary>The value (a read that cannot tear, also in a 32-bit process).</summary>
    public long Read() => IntPtr.Size == 8 ? Volatile.Read(ref _value) : Interlocked.Read(ref _value);

    public void Add(long delta) => Interlocked.Add(ref _value, delta);

    public void Increment() => Interlocked.Increment(ref _value);

    public void Decrement() => Interlocked.Decrement(ref _value);

    public void Reset() => Interlocked.Exchange(ref _value, 0);
}
