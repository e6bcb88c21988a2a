using System;

namespace NetServer.P2P.NatAgent;

/// <summary>A command or argument the agent does not understand; reported as an <c>error</c> line.</summary>
internal sealed class AgentUsageException : Exception
{
    public AgentUsageException()
    {
    }

    public AgentUsageException(string message)
        : base(message)
    {
    }

    public AgentUsageException(string message, Exception innerException)
        : base(message, innerException)
    {
    }
}
