using System;
using NetServer.Tests.Infrastructure;

namespace NetServer.Tests.WebSockets;

/// <summary>The netstandard2.0 build has no WssServer: the WebSocket conformance theories run over TCP only there.</summary>
internal static class WsSecureEcho
{
    public static IWsEchoServer CreateServer(WsServerLog log, LeakCheckingBufferPool pool) =>
        throw new PlatformNotSupportedException("TLS is not part of the netstandard2.0 build.");
}
