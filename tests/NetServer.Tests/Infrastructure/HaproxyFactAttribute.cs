using System;
using Xunit;

namespace NetServer.Tests.Infrastructure;

/// <summary>A fact that starts HAProxy in front of a NetServer (build/install-tools.sh installs it); skipped with the reason where haproxy cannot be run.</summary>
public sealed class HaproxyFactAttribute : FactAttribute
{
    internal static readonly Lazy<string?> Failure = new(() => ToolProbe.Failure("haproxy", ["-v"], TimeSpan.FromSeconds(10), "build/install-tools.sh"));

    public HaproxyFactAttribute()
    {
        if (Failure.Value is { } failure)
            Skip = failure;
    }
}

/// <summary>A theory that starts HAProxy, skipped like <see cref="HaproxyFactAttribute"/>.</summary>
public sealed class HaproxyTheoryAttribute : TheoryAttribute
{
    public HaproxyTheoryAttribute()
    {
        if (HaproxyFactAttribute.Failure.Value is { } failure)
            Skip = failure;
    }
}
