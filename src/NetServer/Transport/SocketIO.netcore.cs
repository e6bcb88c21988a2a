
namespace NetServer.Transport;

internal static partial class SocketIO
{
    public static int TrySend(Socket socket, ReadOnlySpan<byte> data, out SocketError error)
    {
        try
        {
            return socket.Send(data, SocketFlags.None, out error);
        }
        catch (ObjectDisposedException)
        {
            error = SocketError.OperationAborted;
            return 0;
        }
    }

    public static int TryReceive(Socket socket, Span<byte> buffer, out SocketError error)
    {
        try
        {
            return socket.Receive(buffer, SocketFlags.None, out error);
        }
        catch (ObjectDisposedException)
        {
            error = SocketError.OperationAborted;
            return 0;
        }
    }
}
