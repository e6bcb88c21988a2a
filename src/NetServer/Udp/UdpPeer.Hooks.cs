using System.Diagnostics;

namespace NetServer;

public abstract partial class UdpPeer
{
    /// <summary>
    /// Called once per datagram received, never concurrently with itself. The default calls
    /// <see cref="OnReceived(EndPoint, ReadOnlySpan{byte})"/>; override either one.
    /// </summary>
    /// <param name="endpoint">The sender. The same object may be handed out again for the same sender: do not change it.</param>
    /// <param name="buffer">A pooled buffer, valid only during the call.</param>
    /// <param name="offset">Where the datagram starts in <paramref name="buffer"/>.</param>
    /// <param name="size">The datagram's size (0 for an empty datagram).</param>
    protected virtual void OnReceived(EndPoint endpoint, byte[] buffer, long offset, long size) =>
        OnReceived(endpoint, new ReadOnlySpan<byte>(buffer, (int)offset, (int)size));

    /// <summary>Called once per datagram received (when the array overload is not overridden).</summary>
    protected virtual void OnReceived(EndPoint endpoint, ReadOnlySpan<byte> buffer)
    {
    }

    /// <summary>Called after the operating system took a datagram of <paramref name="sent"/> bytes for <paramref name="endpoint"/>.</summary>
    protected virtual void OnSent(EndPoint endpoint, long sent)
    {
    }

    /// <summary>
    /// Called on socket errors; the socket goes on. Among them: a datagram that could not be sent (a
    /// bad or unreachable endpoint, too large: it is dropped), a datagram too large to deliver
    /// (<see cref="SocketError.MessageSize"/>), a port reported unreachable, and a send refused for
    /// lack of room (<see cref="SocketError.NoBufferSpaceAvailable"/>).
    /// </summary>
    protected virtual void OnError(SocketError error)
    {
    }

    /// <summary>
    /// Called when a hook of this socket throws (OnReceived, OnSent, OnError). The socket goes on:
    /// one bad datagram does not stop a server. The default writes the exception to <see cref="Trace"/>.
    /// </summary>
    protected virtual void OnError(Exception exception) => Trace.TraceError("NetServer: {0}", exception);
}
