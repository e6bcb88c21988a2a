using System;
using System.Diagnostics.CodeAnalysis;

namespace NetServer.P2P.Internal;

/// <summary>Argument checks that read the same on both targets (netstandard2.1 has no <c>ArgumentNullException.ThrowIfNull</c>).</summary>
internal static class Guard
{
    public static void NotNull([NotNull] object? value, string name)
    {
        if (value is null)
            ThrowNull(name);
    }

    [DoesNotReturn]
    private static void ThrowNull(string name) => throw new ArgumentNullException(name);
}
