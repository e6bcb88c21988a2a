using Xunit;

namespace NetServer.Tests.WebSockets;

/// <summary>A theory that runs Node.js with the <c>ws</c> package (tests/node) as an independent WebSocket peer; skipped with the reason where either is missing.</summary>
public sealed class NodeWsTheoryAttribute : TheoryAttribute
{
    public NodeWsTheoryAttribute()
    {
        if (WsInteropPeers.NodeFailure is { } failure)
            Skip = failure;
    }
}
