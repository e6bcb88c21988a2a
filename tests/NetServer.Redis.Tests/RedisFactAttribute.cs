using System;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Redis.Tests;

/// <summary>A fact skipped with the reason when redis-server cannot run.</summary>
public sealed class RedisFactAttribute : FactAttribute
{
    internal static readonly Lazy<string?> Failure = new(() => ToolProbe.Failure("redis-server", ["--version"], TimeSpan.FromSeconds(10), "build/install-tools.sh"));

    public RedisFactAttribute()
    {
        if (Failure.Value is { } failure)
            Skip = failure;
    }
}
