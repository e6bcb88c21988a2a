namespace NetServer.Diagnostics;

/// <summary>
/// Raises <see cref="NetServerEventListener"/> events, each in one place: a null listener costs a
/// check (arguments such as the peer's address are computed only past it), and what a listener
/// throws is dropped, as <see cref="NetServerEventListener"/> documents, so that a faulty listener
/// never changes what the engine does.
/// </summary>
internal static class ListenerEvents
{
    public static void Listening(NetServerEventListener? listener, object source, EndPoint endpoint)
    {
        if (listener is null)
            return;
        try
        {
            listener.Listening(source, endpoint);
        }
        catch (Exception)
        {
            // Dropped on purpose (see the class comment).
        }
    }

    public static void Stopped(NetServerEventListener? listener, object source, EndPoint endpoint)
    {
        if (listener is null)
            return;
        try
        {
            listener.Stopped(source, endpoint);
        }
        catch (Exception)
        {
            // Dropped on purpose (see the class comment).
        }
    }

    public static void AcceptRefused(NetServerEventListener? listener, object source, Socket socket, long sessionLimit)
    {
        if (listener is null)
            return;
        try
        {
            listener.AcceptRefused(source, PeerOf(socket), sessionLimit);
        }
        catch (Exception)
        {
            // Dropped on purpose (see the class comment).
        }
    }

    public static void ConnectionClosed(StreamConnection owner, Connection connection)
    {
        if (owner.Listener is not { } listener)
            return;
        try
        {
            listener.ConnectionClosed(owner.DiagnosticSource, owner.Id, connection.PeerEndPoint, connection.Reason, connection.SocketError);
        }
        catch (Exception)
        {
            // Dropped on purpose (see the class comment).
        }
    }

    public static void ProtocolError(StreamConnection owner, Connection connection, string protocol, string error)
    {
        if (owner.Listener is not { } listener)
            return;
        try
        {
            listener.ProtocolError(owner.DiagnosticSource, owner.Id, connection.PeerEndPoint, protocol, error);
        }
        catch (Exception)
        {
            // Dropped on purpose (see the class comment).
        }
    }

    public static void TlsHandshakeFailed(StreamConnection owner, Connection connection, Exception failure)
    {
        if (owner.Listener is not { } listener)
            return;
        try
        {
            listener.TlsHandshakeFailed(owner.DiagnosticSource, owner.Id, connection.PeerEndPoint,
                failure is TimeoutException ? "timed out" : failure.Message);
        }
        catch (Exception)
        {
            // Dropped on purpose (see the class comment).
        }
    }

    public static void SendPaused(StreamConnection owner, Connection connection, long bytesPending)
    {
        if (owner.Listener is not { } listener)
            return;
        try
        {
            listener.SendPaused(owner.DiagnosticSource, owner.Id, connection.PeerEndPoint, bytesPending);
        }
        catch (Exception)
        {
            // Dropped on purpose (see the class comment).
        }
    }

    public static void MulticastDisconnect(StreamConnection owner, Connection connection, long bytesPending)
    {
        if (owner.Listener is not { } listener)
            return;
        try
        {
            listener.MulticastDisconnect(owner.DiagnosticSource, owner.Id, connection.PeerEndPoint, bytesPending);
        }
        catch (Exception)
        {
            // Dropped on purpose (see the class comment).
        }
    }

    /// <summary>A socket's peer, or null once it is closed (the runtime throws then instead of answering).</summary>
    public static EndPoint? PeerOf(Socket socket)
    {
        try
        {
            return socket.RemoteEndPoint;
        }
        catch (Exception e) when (e is ObjectDisposedException or SocketException)
        {
            return null;
        }
    }
}
