using Xunit;

namespace NetServer.Tests.Infrastructure;

/// <summary>
/// A fact about what only the net10.0 build of NetServer does (an API netstandard2.1 lacks, or an
/// example program, which is built for net10.0). Run against the netstandard2.1 build
/// (NetServer.Tests.NetStandard21), it is reported as skipped with <c>reason</c>, not left out.
/// </summary>
public sealed class Net10FactAttribute : FactAttribute
{
    public Net10FactAttribute(string reason)
    {
#if NETSERVER_NETSTANDARD21
        Skip = "Only the net10.0 build does this: " + reason;
#else
        _ = reason;
#endif
    }
}
