
namespace NetServer;

/// <summary>The hooks: what the engine calls, the protocol that may take the received bytes, and the <c>On*</c> methods to override.</summary>
public abstract partial class StreamConnection
{
    private StreamProtocol? _protocol;
    private Connection? _ready; // the connection whose InvokeReady ran (a protocol attached later starts at once)

    /// <summary>
    /// The protocol that handles this connection's received bytes (see <see cref="StreamProtocol"/>),
    /// or null (the default) for the <c>OnReceived</c> hooks. Set it in the constructor, or from a
    /// hook to switch protocols mid-stream (an upgrade): bytes not consumed yet go to the new one.
    /// It stays attached across the reconnects of a client.
    /// </summary>
    /// <exception cref="InvalidOperationException">The protocol is already attached to another connection.</exception>
    public StreamProtocol? Protocol
    {
        get => Volatile.Read(ref _protocol);
        set
        {
            if (ReferenceEquals(Volatile.Read(ref _protocol), value))
                return;
            if (value?.Connection is not null)
                ThrowHelper.ThrowInvalidOperation("This protocol is already attached to a connection; a protocol object serves one connection.");

            // One exchange: of two concurrent sets, each detaches only what it replaced.
            var previous = Interlocked.Exchange(ref _protocol, value);
            var connection = CurrentConnection;
            RunProtocolHooks(connection, previous, value);
        }
    }

    /// <summary>
    /// The detach and attach hooks of a protocol switch, run as every hook is: inside a callback
    /// scope, holding the connection (no OnDisconnected meanwhile), a throw closing the connection
    /// with HandlerException. With no connection (before the first connect) a throw goes to the caller.
    /// </summary>
    private void RunProtocolHooks(Connection? connection, StreamProtocol? previous, StreamProtocol? next)
    {
        var held = connection?.TryHold() == true;
        CallbackScope.Enter(held ? connection : null);
        try
        {
            if (previous is not null)
            {
                previous.InvokeDetached();
                previous.Connection = null;
            }

            if (next is null)
                return;
            next.Connection = this;
            next.OnAttached();
            if (held && connection!.IsOpen && ReferenceEquals(Volatile.Read(ref _ready), connection))
                next.InvokeConnected();
        }
        catch (Exception e) when (held)
        {
            connection!.Abort(NetServer.DisconnectReason.HandlerException, e);
        }
        finally
        {
            CallbackScope.Exit();
            if (held)
                connection!.Release();
        }
    }

    // --- Hook dispatch from the engine ---

    internal virtual void InvokeDisconnecting() => OnDisconnecting();

    /// <summary>Delivers received bytes to the protocol (returning what it consumed) or to OnReceived (which consumes them all).</summary>
    internal int InvokeReceived(byte[] buffer, int offset, int size)
    {
        var protocol = Volatile.Read(ref _protocol);
        if (protocol is null)
        {
            OnReceived(buffer, offset, size);
            return size;
        }

        var consumed = protocol.OnReceived(new ReadOnlySpan<byte>(buffer, offset, size));
        if ((uint)consumed > (uint)size)
            ThrowHelper.ThrowInvalidOperation($"{protocol.GetType().Name}.OnReceived returned {consumed}; it must return between 0 and the {size} bytes it was given.");
        return consumed;
    }

    internal void InvokeSent(long sent, long pending)
    {
        Volatile.Read(ref _protocol)?.OnSent(sent, pending);
        OnSent(sent, pending);
    }

    internal void InvokeEmpty()
    {
        Volatile.Read(ref _protocol)?.OnEmpty();
        OnEmpty();
    }

    internal virtual void InvokeError(SocketError error) => OnError(error);

    /// <summary>The connection is ready (connected, and handshaked over TLS): sessions join multicasts, the protocol starts.</summary>
    internal virtual void InvokeReady()
    {
        Volatile.Write(ref _ready, CurrentConnection);
        Volatile.Read(ref _protocol)?.InvokeConnected();
    }

    /// <summary>The protocol's last word on a connection that ended (before the connection's own OnDisconnected).</summary>
    private void NotifyProtocolDisconnected(DisconnectReason reason)
    {
        if (Volatile.Read(ref _protocol) is not { } protocol)
            return;
        CallbackScope.Enter();
        try
        {
            protocol.InvokeDisconnected(reason);
        }
        catch (Exception e)
        {
            // The connection is already gone; keep the failure visible where the reason is.
            _lastException ??= e;
        }
        finally
        {
            CallbackScope.Exit();
        }
    }

    internal virtual void InvokeHandshaking()
    {
    }

    internal virtual void InvokeHandshaked()
    {
    }

    internal virtual void InvokeHandshakeFailed(Exception exception)
    {
    }

    // --- Hooks ---

    /// <summary>Called before the connection is set up.</summary>
    protected virtual void OnConnecting()
    {
    }

    /// <summary>Called once the connection is up, before any data is delivered; sends are allowed here.</summary>
    protected virtual void OnConnected()
    {
    }

    /// <summary>Called when the connection starts to close, on the thread that closes it.</summary>
    protected virtual void OnDisconnecting()
    {
    }

    /// <summary>Called exactly once per connection, last; see <see cref="OnDisconnected(DisconnectReason)"/>.</summary>
    protected virtual void OnDisconnected()
    {
    }

    /// <summary>
    /// Called exactly once per connection, after every other hook of it, with the reason it ended.
    /// The default calls <see cref="OnDisconnected()"/>; override either one.
    /// </summary>
    protected virtual void OnDisconnected(DisconnectReason reason) => OnDisconnected();

    /// <summary>
    /// Called with each chunk of received bytes, in order, never concurrently with itself. The
    /// default calls <see cref="OnReceived(ReadOnlySpan{byte})"/>; override either one.
    /// </summary>
    /// <param name="buffer">A pooled buffer, valid only during the call.</param>
    /// <param name="offset">Where the received bytes start in <paramref name="buffer"/>.</param>
    /// <param name="size">How many bytes were received.</param>
    protected virtual void OnReceived(byte[] buffer, long offset, long size) =>
        OnReceived(new ReadOnlySpan<byte>(buffer, (int)offset, (int)size));

    /// <summary>Called with each chunk of received bytes (when the array overload is not overridden).</summary>
    protected virtual void OnReceived(ReadOnlySpan<byte> buffer)
    {
    }

    /// <summary>Called after the operating system took <paramref name="sent"/> bytes; <paramref name="pending"/> are still queued.</summary>
    protected virtual void OnSent(long sent, long pending)
    {
    }

    /// <summary>Called when the send queue has drained; a good place to send the next batch.</summary>
    protected virtual void OnEmpty()
    {
    }

    /// <summary>Called on socket errors other than ordinary disconnects, and when a send is refused for lack of room.</summary>
    protected virtual void OnError(SocketError error)
    {
    }
}
