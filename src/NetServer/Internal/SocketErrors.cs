
namespace NetServer.Internal;

/// <summary>The one place that decides what a socket error means for a connection.</summary>
internal static class SocketErrors
{
    /// <summary>
    /// Errors that are the ordinary end of a connection (the peer left, or we closed the socket
    /// ourselves). They end the connection without an <c>OnError</c> call, as NetCoreServer did.
    /// </summary>
    public static bool IsDisconnect(SocketError error) => error switch
    {
        SocketError.ConnectionAborted => true,
        SocketError.ConnectionReset => true,
        SocketError.ConnectionRefused => true,
        SocketError.OperationAborted => true,
        SocketError.Shutdown => true,
        SocketError.NotConnected => true,
        // EBADF after a concurrent close surfaces as NotSocket/Interrupted on Unix.
        SocketError.NotSocket => true,
        SocketError.Interrupted => true,
        _ => false,
    };

    /// <summary>The reason recorded when <paramref name="error"/> ends a connection.</summary>
    /// <remarks>
    /// Every ordinary disconnect error is a reset: a Unix socket whose peer went away fails the
    /// next send with EPIPE (Shutdown), a TCP one with ECONNRESET, depending on timing.
    /// </remarks>
    public static DisconnectReason ToReason(SocketError error) =>
        error == SocketError.TimedOut ? DisconnectReason.TimedOut
        : IsDisconnect(error) ? DisconnectReason.ConnectionReset
        : DisconnectReason.SocketError;

    /// <summary>
    /// Accept failures that come from resource exhaustion (out of file descriptors or buffers):
    /// retrying at once would fail again, so the acceptor backs off briefly.
    /// </summary>
    public static bool IsResourceExhaustion(SocketError error) =>
        error is SocketError.TooManyOpenSockets or SocketError.NoBufferSpaceAvailable;

    /// <summary>Maps an exception thrown by a socket call to its error code.</summary>
    /// <remarks>
    /// Streams (TLS) wrap socket failures in an <see cref="System.IO.IOException"/> whose inner
    /// exception is the <see cref="SocketException"/>; a cancelled stream operation is our own close.
    /// </remarks>
    public static SocketError FromException(Exception exception) => exception switch
    {
        SocketException se => se.SocketErrorCode,
        ObjectDisposedException or OperationCanceledException => SocketError.OperationAborted,
        System.IO.IOException { InnerException: SocketException inner } => inner.SocketErrorCode,
        _ => SocketError.SocketError,
    };
}
