
namespace NetServer;

/// <summary>
/// A protocol (a codec) that handles a stream connection's bytes: hosted by any session or client
/// (TCP, TLS, Unix domain sockets) through <see cref="StreamConnection.Protocol"/>, so a protocol
/// is written once for every transport, also in another assembly.
/// </summary>
/// <remarks>
/// <para>While a protocol is attached, received bytes go to its <see cref="OnReceived"/> instead of
/// the connection's <c>OnReceived</c> hooks. It returns how many bytes it consumed; the rest stays
/// in the connection's pooled receive buffer and comes back, in front of the next bytes, on the next
/// call (retained input: a partial frame is never copied by the protocol). The connection's
/// <c>OptionReceiveBufferLimit</c> bounds what may be retained: a protocol that consumes nothing of
/// a full buffer closes the connection with <see cref="DisconnectReason.ReceiveBufferFull"/>.</para>
/// <para>Everything the engine guarantees holds for protocol hooks too: <see cref="OnReceived"/>
/// never runs concurrently with itself; <see cref="OnDisconnected"/> runs once, last. Sends made
/// inside the hooks are gathered into one socket write when the hook returns. A hook that throws
/// closes the connection with <see cref="DisconnectReason.HandlerException"/>.</para>
/// <para>To send, pause or close, use <see cref="Connection"/>: <c>SendAsync</c>, <c>StartSend</c>
/// (build a frame in place), <c>PauseReceiving</c>/<c>ResumeReceiving</c>, <c>Disconnect</c>.
/// Assigning another protocol from inside <see cref="OnReceived"/> (an upgrade) hands the bytes not
/// consumed yet to the new one at once.</para>
/// </remarks>
public abstract class StreamProtocol
{
    /// <summary>The connection this protocol is attached to (null before it is attached and after it is detached).</summary>
    public StreamConnection? Connection { get; internal set; }

    /// <summary>
    /// Called with every received byte not consumed yet, in order. Return how many bytes (from the
    /// start of <paramref name="data"/>) were consumed, 0 to <c>data.Length</c>; the rest is
    /// delivered again with the next bytes. The span is valid only during the call.
    /// </summary>
    protected internal abstract int OnReceived(ReadOnlySpan<byte> data);

    /// <summary>Called when the protocol is attached to <see cref="Connection"/> (before any other hook of it).</summary>
    protected internal virtual void OnAttached()
    {
    }

    /// <summary>
    /// Called when the connection is ready for the protocol: connected and, over TLS, handshaked
    /// (after the connection's own OnConnected / OnHandshaked). A protocol attached to a connection
    /// that is already ready gets this call right after <see cref="OnAttached"/>.
    /// </summary>
    protected internal virtual void OnConnected()
    {
    }

    /// <summary>Called after the operating system took <paramref name="sent"/> bytes; <paramref name="pending"/> are still queued.</summary>
    protected internal virtual void OnSent(long sent, long pending)
    {
    }

    /// <summary>Called when the send queue has drained.</summary>
    protected internal virtual void OnEmpty()
    {
    }

    /// <summary>Called once when the connection ended (before the connection's own OnDisconnected), with the reason.</summary>
    protected internal virtual void OnDisconnected(DisconnectReason reason)
    {
    }

    /// <summary>Called when another protocol replaces this one, or it is removed (<c>Protocol = null</c>).</summary>
    protected internal virtual void OnDetached()
    {
    }

    // The engine calls these, so a protocol of this library can keep its own state right even when
    // a subclass overrides the hooks without calling the base.
    internal virtual void InvokeConnected() => OnConnected();

    internal virtual void InvokeDisconnected(DisconnectReason reason) => OnDisconnected(reason);

    internal virtual void InvokeDetached() => OnDetached();

    /// <summary>The protocol's name in diagnostics ("HTTP", "WebSocket", "Messages"); the type's name for a protocol from elsewhere.</summary>
    internal virtual string DiagnosticName => GetType().Name;

    /// <summary>Sends what the protocol holds back for the calling thread (the connection is about to send or close from it).</summary>
    internal virtual void FlushHeld()
    {
    }
}
