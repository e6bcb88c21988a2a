using System.Net.Sockets;
using Xunit;

namespace NetServer.Tests.Infrastructure;

/// <summary>A fact that needs multicast to loop back on this machine; skipped with the reason where it does not (see <see cref="MulticastRoute"/>).</summary>
public sealed class MulticastFactAttribute : FactAttribute
{
    public MulticastFactAttribute(AddressFamily family = AddressFamily.InterNetwork)
    {
        if (MulticastRoute.For(family).Failure is { } failure)
            Skip = failure;
    }
}
