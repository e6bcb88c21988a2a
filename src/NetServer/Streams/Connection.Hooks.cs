
namespace NetServer.Streams;

/// <summary>
/// Raising user hooks: every hook runs inside a callback scope of this connection (so its sends
/// are gathered, see <see cref="CallbackScope"/>), and a hook that throws ends the connection.
/// </summary>
internal sealed partial class Connection
{
    private void HandlerFailed(Exception exception) => Abort(DisconnectReason.HandlerException, exception);

    private void RaiseDisconnecting()
    {
        CallbackScope.Enter(this);
        try
        {
            _owner.InvokeDisconnecting();
        }
        catch (Exception e)
        {
            Interlocked.CompareExchange(ref _exception, e, null);
        }
        finally
        {
            CallbackScope.Exit();
        }
    }

    /// <summary>The connection is ready (connected, and handshaked over a layer): multicasts and the protocol's OnConnected.</summary>
    private void RaiseReady()
    {
        CallbackScope.Enter(this);
        try
        {
            _owner.InvokeReady();
        }
        catch (Exception e)
        {
            HandlerFailed(e);
        }
        finally
        {
            CallbackScope.Exit();
        }
    }

    /// <summary>
    /// Reports a send refused for lack of room through OnError, unless the connection has already
    /// finished: the reference held meanwhile keeps OnDisconnected from overtaking the report.
    /// </summary>
    public void ReportSendRefused()
    {
        if (!TryAddReference())
            return;
        try
        {
            RaiseError(SocketError.NoBufferSpaceAvailable);
        }
        finally
        {
            ReleaseReference();
        }
    }

    private void RaiseError(SocketError error)
    {
        CallbackScope.Enter(this);
        try
        {
            _owner.InvokeError(error);
        }
        catch (Exception e)
        {
            HandlerFailed(e);
        }
        finally
        {
            CallbackScope.Exit();
        }
    }

    /// <summary>Ends the connection because of a socket error; unexpected errors are reported through OnError first.</summary>
    private void Fail(SocketError error)
    {
        RecordSocketError(error);
        if (SocketErrors.IsDisconnect(error) || IsSocketClosed)
        {
            Abort(SocketErrors.ToReason(error));
            return;
        }

        RaiseError(error);
        Abort(SocketErrors.ToReason(error));
    }

    /// <summary>
    /// Runs OnReceived (or the protocol) on <paramref name="count"/> bytes; returns how many it
    /// consumed, or -1 if the hook threw (the connection is then closing).
    /// </summary>
    private int RaiseReceived(byte[] array, int offset, int count)
    {
        CallbackScope.Enter(this, receiving: true);
        try
        {
            return _owner.InvokeReceived(array, offset, count);
        }
        catch (Exception e)
        {
            HandlerFailed(e);
            return -1;
        }
        finally
        {
            CallbackScope.Exit();
        }
    }

    private void RaiseSent(long sent, long pending)
    {
        CallbackScope.Enter(this);
        try
        {
            _owner.InvokeSent(sent, pending);
        }
        catch (Exception e)
        {
            HandlerFailed(e);
        }
        finally
        {
            CallbackScope.Exit();
        }
    }

    private void RaiseEmpty()
    {
        CallbackScope.Enter(this);
        try
        {
            _owner.InvokeEmpty();
        }
        catch (Exception e)
        {
            HandlerFailed(e);
        }
        finally
        {
            CallbackScope.Exit();
        }
    }
}
