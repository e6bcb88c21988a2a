
namespace NetServer.Transport;

/// <summary>Socket option helpers shared by servers and clients.</summary>
internal static partial class SocketOptions
{
    /// <summary>
    /// Applies TCP keep-alive: SO_KEEPALIVE plus the three timings where given (-1 = OS default).
    /// </summary>
    public static void ApplyKeepAlive(Socket socket, bool enabled, int time, int interval, int retryCount)
    {
        if (!enabled)
            return;
        socket.SetSocketOption(SocketOptionLevel.Socket, SocketOptionName.KeepAlive, true);
        if (time >= 0)
            socket.SetSocketOption(SocketOptionLevel.Tcp, KeepAliveTime, time);
        if (interval >= 0)
            socket.SetSocketOption(SocketOptionLevel.Tcp, KeepAliveInterval, interval);
        if (retryCount >= 0)
            socket.SetSocketOption(SocketOptionLevel.Tcp, KeepAliveRetryCount, retryCount);
    }
}
