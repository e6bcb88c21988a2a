using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;

namespace NetServer.Internal;

/// <summary>Throw sites kept out of line so the hot methods that validate stay small.</summary>
internal static class ThrowHelper
{
    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    public static void ThrowArgumentNull(string paramName) => throw new ArgumentNullException(paramName);

    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    public static void ThrowArgumentOutOfRange(string paramName, string message) =>
        throw new ArgumentOutOfRangeException(paramName, message);

    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    public static void ThrowInvalidOperation(string message) => throw new InvalidOperationException(message);

    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    public static void ThrowObjectDisposed(string objectName) => throw new ObjectDisposedException(objectName);

    /// <summary>
    /// Validates the compatible <c>(byte[] buffer, long offset, long size)</c> triple and narrows it
    /// to <see cref="int"/> without a silent cast: anything outside the array is an argument error.
    /// </summary>
    public static void ValidateRange(byte[]? buffer, long offset, long size, out int start, out int count)
    {
        if (buffer is null)
            ThrowArgumentNull(nameof(buffer));
        if ((ulong)offset > (ulong)buffer.Length)
            ThrowArgumentOutOfRange(nameof(offset), "The offset lies outside the buffer.");
        if ((ulong)size > (ulong)(buffer.Length - offset))
            ThrowArgumentOutOfRange(nameof(size), "The offset and size describe bytes outside the buffer.");
        start = (int)offset;
        count = (int)size;
    }

    /// <summary>Validates a size option: positive, or zero where zero means "no limit".</summary>
    public static int ValidateOption(int value, bool zeroAllowed, string name)
    {
        if (value < 0 || (value == 0 && !zeroAllowed))
            ThrowArgumentOutOfRange(name, zeroAllowed ? "The value must be zero or positive." : "The value must be positive.");
        return value;
    }
}
