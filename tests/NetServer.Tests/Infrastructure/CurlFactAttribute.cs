using System;
using Xunit;

namespace NetServer.Tests.Infrastructure;

/// <summary>A fact that runs curl as an independent HTTP client (build/install-tools.sh installs it); skipped with the reason where curl cannot be run.</summary>
public sealed class CurlFactAttribute : FactAttribute
{
    private static readonly Lazy<string?> s_failure = new(() => ToolProbe.Failure("curl", ["--version"], TimeSpan.FromSeconds(10), "build/install-tools.sh"));

    public CurlFactAttribute()
    {
        if (s_failure.Value is { } failure)
            Skip = failure;
    }
}
