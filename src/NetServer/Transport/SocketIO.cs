using System.Collections.Generic;

namespace NetServer.Transport;

/// <summary>
/// Non-blocking socket calls. The engine puts every connected socket in non-blocking mode
/// (<c>Socket.Blocking = false</c>), so these return <see cref="SocketError.WouldBlock"/> instead of
/// waiting; the engine then falls back to an asynchronous operation. ObjectDisposedException from a
/// socket closed by another thread becomes <see cref="SocketError.OperationAborted"/>.
/// </summary>
internal static partial class SocketIO
{
    public static int TrySend(Socket socket, byte[] array, int offset, int count, out SocketError error)
    {
        try
        {
            return socket.Send(array, offset, count, SocketFlags.None, out error);
        }
        catch (ObjectDisposedException)
        {
            error = SocketError.OperationAborted;
            return 0;
        }
    }

    public static int TrySend(Socket socket, IList<ArraySegment<byte>> segments, out SocketError error)
    {
        try
        {
            return socket.Send(segments, SocketFlags.None, out error);
        }
        catch (ObjectDisposedException)
        {
            error = SocketError.OperationAborted;
            return 0;
        }
    }

    public static int TryReceive(Socket socket, byte[] array, int offset, int count, out SocketError error)
    {
        try
        {
            return socket.Receive(array, offset, count, SocketFlags.None, out error);
        }
        catch (ObjectDisposedException)
        {
            error = SocketError.OperationAborted;
            return 0;
        }
    }

    /// <summary>
    /// Waits (blocking the caller) until the socket is readable or writable; used only by the
    /// compatible synchronous <c>Receive</c>/<c>Send</c> calls on a non-blocking socket.
    /// </summary>
    public static SocketError Poll(Socket socket, SelectMode mode, int timeoutMilliseconds)
    {
        try
        {
            var microseconds = timeoutMilliseconds <= 0 ? -1 : (int)Math.Min((long)timeoutMilliseconds * 1000, int.MaxValue);
            return socket.Poll(microseconds, mode) ? SocketError.Success : SocketError.TimedOut;
        }
        catch (SocketException e)
        {
            return e.SocketErrorCode;
        }
        catch (ObjectDisposedException)
        {
            return SocketError.OperationAborted;
        }
    }
}
