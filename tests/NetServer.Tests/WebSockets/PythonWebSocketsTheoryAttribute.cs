using Xunit;

namespace NetServer.Tests.WebSockets;

/// <summary>A theory that runs python3 with the <c>websockets</c> package as an independent WebSocket peer; skipped with the reason where no python3 can import it.</summary>
public sealed class PythonWebSocketsTheoryAttribute : TheoryAttribute
{
    public PythonWebSocketsTheoryAttribute()
    {
        if (WsInteropPeers.PythonFailure is { } failure)
            Skip = failure;
    }
}
