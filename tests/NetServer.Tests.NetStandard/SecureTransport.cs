using System;
using System.Net;
using NetServer.Tests.Infrastructure;

namespace NetServer.Tests;

/// <summary>The netstandard2.0 build has no TLS types (no SslServerAuthenticationOptions there): TLS theories are left out.</summary>
internal static class SecureTransport
{
    public static bool Enabled => false;

    public static IProbeServer CreateServer(IPEndPoint endpoint, ServerProbe probe, LeakCheckingBufferPool pool) =>
        throw new PlatformNotSupportedException("TLS is not part of the netstandard2.0 build.");

    public static System.Threading.Tasks.Task<System.Net.Sockets.Socket> ConnectRelayAsync(IPEndPoint endpoint) =>
        throw new PlatformNotSupportedException("TLS is not part of the netstandard2.0 build.");

    public static StreamClient CreateClient(IPEndPoint endpoint, Probe probe) =>
        throw new PlatformNotSupportedException("TLS is not part of the netstandard2.0 build.");

    public static Func<NetServer.Messaging.IProtocolHostOwner, NetServer.Messaging.IProtocolHost> MessageHost(EndPoint endpoint) =>
        throw new PlatformNotSupportedException("TLS is not part of the netstandard2.0 build.");

    public static MessageClient CreateMessageClient(EndPoint endpoint) =>
        throw new PlatformNotSupportedException("TLS is not part of the netstandard2.0 build.");
}
