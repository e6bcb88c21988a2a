using System;

namespace NetServer.P2P.Tests.Nat;

/// <summary>A lab command (ip, iptables, tc, sysctl) that failed or did not finish: the command line and what it printed.</summary>
internal sealed class NatLabException : Exception
{
    public NatLabException()
    {
    }

    public NatLabException(string message)
        : base(message)
    {
    }

    public NatLabException(string message, Exception innerException)
        : base(message, innerException)
    {
    }
}
