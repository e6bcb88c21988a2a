
namespace NetServer.Transport;

internal static partial class SocketOptions
{
    private const SocketOptionName KeepAliveTime = SocketOptionName.TcpKeepAliveTime;
    private const SocketOptionName KeepAliveInterval = SocketOptionName.TcpKeepAliveInterval;
    private const SocketOptionName KeepAliveRetryCount = SocketOptionName.TcpKeepAliveRetryCount;
}
