namespace NetServer.Tests.WebSockets;

/// <summary>The independent WebSocket implementations the interop tests run against (<see cref="WsInteropPeers"/>).</summary>
public enum WsPeer
{
    /// <summary>Node.js with the <c>ws</c> package, installed into tests/node by build/install-tools.sh.</summary>
    Node,

    /// <summary>python3 with the <c>websockets</c> package (Debian's python3-websockets, for /usr/bin/python3).</summary>
    Python,
}
