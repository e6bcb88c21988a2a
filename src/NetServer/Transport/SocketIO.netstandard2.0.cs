using System.Buffers;

namespace NetServer.Transport;

// netstandard2.0 sockets take arrays only: a span is staged through a pooled array.
internal static partial class SocketIO
{
    public static int TrySend(Socket socket, ReadOnlySpan<byte> data, out SocketError error)
    {
        var array = ArrayPool<byte>.Shared.Rent(data.Length);
        try
        {
            data.CopyTo(array);
            return TrySend(socket, array, 0, data.Length, out error);
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(array);
        }
    }
}
