
namespace NetServer.Transport;

// The keep-alive timing names are not in netstandard's enum; these are their values in .NET
// Core 3.0+, which every runtime that can load the netstandard build of NetServer on Linux has.
internal static partial class SocketOptions
{
    private const SocketOptionName KeepAliveTime = (SocketOptionName)3;
    private const SocketOptionName KeepAliveInterval = (SocketOptionName)17;
    private const SocketOptionName KeepAliveRetryCount = (SocketOptionName)16;
}
