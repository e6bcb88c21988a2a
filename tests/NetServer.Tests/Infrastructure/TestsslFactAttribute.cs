using System;
using Xunit;

namespace NetServer.Tests.Infrastructure;

/// <summary>A fact that runs Debian's testssl.sh (`testssl`); skipped with the reason where it cannot run.</summary>
public sealed class TestsslFactAttribute : FactAttribute
{
    private static readonly Lazy<string?> s_failure = new(() => ToolProbe.Failure("testssl", ["--version"], TimeSpan.FromSeconds(20), "build/install-tools.sh (testssl.sh)"));

    public TestsslFactAttribute()
    {
        if (s_failure.Value is { } failure)
            Skip = failure;
    }
}
