using System;
using System.Reflection;
using System.Runtime.Versioning;
using Xunit;

namespace NetServer.Tests.Infrastructure;

/// <summary>
/// A fact about what only the net10.0 build of NetServer does (an API the netstandard targets
/// lack, or an example program, which is built for net10.0). Run against a netstandard build
/// (NetServer.Tests.NetStandard, NetServer.Tests.NetStandard21), it is reported as skipped with
/// <c>reason</c>, not left out.
/// </summary>
public sealed class Net10FactAttribute : FactAttribute
{
    public Net10FactAttribute(string reason)
    {
        if (!IsNet10Build)
            Skip = "Only the net10.0 build does this: " + reason;
    }

    /// <summary>Whether the NetServer under test is its net10.0 build (the netstandard builds' test projects run on .NET 10 too).</summary>
    internal static bool IsNet10Build =>
        typeof(UdpPeer).Assembly.GetCustomAttribute<TargetFrameworkAttribute>()?.FrameworkName.StartsWith(".NETCoreApp", StringComparison.Ordinal) == true;
}
