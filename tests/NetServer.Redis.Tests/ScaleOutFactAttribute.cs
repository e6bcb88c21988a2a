using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Redis.Tests;

/// <summary>A fact that needs redis-server and haproxy (build/install-tools.sh installs both); skipped with the reason when either cannot run.</summary>
public sealed class ScaleOutFactAttribute : FactAttribute
{
    internal static string? Failure => RedisFactAttribute.Failure.Value ?? HaproxyFactAttribute.Failure.Value;

    public ScaleOutFactAttribute()
    {
        if (Failure is { } failure)
            Skip = failure;
    }
}

/// <summary>A theory skipped like <see cref="ScaleOutFactAttribute"/>.</summary>
public sealed class ScaleOutTheoryAttribute : TheoryAttribute
{
    public ScaleOutTheoryAttribute()
    {
        if (ScaleOutFactAttribute.Failure is { } failure)
            Skip = failure;
    }
}
