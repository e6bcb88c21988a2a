using System.Buffers;

namespace NetServer;

/// <summary>Receiving: the compatible blocking receive, the receive loop, and pausing it.</summary>
public abstract partial class StreamConnection
{
    // --- Receive (compatible) ---

    /// <summary>
    /// Blocking receive into <paramref name="buffer"/> (honours <c>Socket.ReceiveTimeout</c>; 0 on timeout or
    /// disconnect). Also raises OnReceived. Only when the asynchronous receive loop is not running:
    /// after a synchronous <c>Connect()</c> on a client, before <see cref="ReceiveAsync"/>.
    /// </summary>
    /// <exception cref="InvalidOperationException">The asynchronous receive loop is running.</exception>
    public virtual long Receive(byte[] buffer)
    {
        if (buffer is null)
            ThrowHelper.ThrowArgumentNull(nameof(buffer));
        return Receive(buffer, 0, buffer.Length);
    }

    /// <summary>Blocking receive into part of <paramref name="buffer"/>; see <see cref="Receive(byte[])"/>.</summary>
    /// <exception cref="InvalidOperationException">The asynchronous receive loop is running.</exception>
    public virtual long Receive(byte[] buffer, long offset, long size)
    {
        ThrowHelper.ValidateRange(buffer, offset, size, out var start, out var count);
        var connection = CurrentConnection;
        if (connection is null || count == 0 || !connection.IsOpen)
            return 0;
        int timeout;
        try
        {
            timeout = connection.Socket.ReceiveTimeout;
        }
        catch (ObjectDisposedException)
        {
            return 0; // closed meanwhile
        }

        return connection.ReceiveBlocking(buffer, start, count, timeout);
    }

    /// <summary>Blocking receive of at most <paramref name="size"/> bytes, decoded as UTF-8; see <see cref="Receive(byte[])"/>.</summary>
    /// <exception cref="InvalidOperationException">The asynchronous receive loop is running.</exception>
    public virtual string Receive(long size)
    {
        if (size < 0 || size > int.MaxValue)
            ThrowHelper.ThrowArgumentOutOfRange(nameof(size), "The size must be between 0 and int.MaxValue.");
        var array = ArrayPool<byte>.Shared.Rent((int)Math.Max(size, 1));
        try
        {
            var received = Receive(array, 0, size);
            return TextEncoding.Decode(new ReadOnlySpan<byte>(array, 0, (int)received));
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(array);
        }
    }

    /// <summary>
    /// Starts the asynchronous receive loop that raises OnReceived (sessions and asynchronously
    /// connected clients start it themselves; calling it again does nothing).
    /// </summary>
    public virtual void ReceiveAsync() => CurrentConnection?.StartReceiving();

    // --- Pause and resume ---

    /// <summary>
    /// Stops reading from the socket after the current delivery, until <see cref="ResumeReceiving"/>:
    /// the peer is slowed down by TCP flow control, no thread is held and nothing is buffered beyond
    /// what was already read (which is kept and delivered first on resume). For a handler that
    /// finishes its work asynchronously (a streamed body, a large message, an awaited request).
    /// Pausing and resuming are idempotent; they do not nest.
    /// </summary>
    public void PauseReceiving() => CurrentConnection?.PauseReceiving();

    /// <summary>Reads again after <see cref="PauseReceiving"/>; bytes kept meanwhile are delivered first.</summary>
    public void ResumeReceiving() => CurrentConnection?.ResumeReceiving();

    /// <summary>
    /// True while receiving is paused, by <see cref="PauseReceiving"/> or because more than
    /// <see cref="OptionSendHighWaterMark"/> bytes wait to be sent.
    /// </summary>
    public bool IsReceivingPaused => CurrentConnection?.IsReceivePaused == true;

    /// <summary>
    /// Called from the receive hook by a protocol that will send more during this delivery (it holds
    /// further requests to answer): the next send is gathered with the ones after it into one write
    /// when the hook returns, instead of going out alone (see <see cref="CallbackScope.ExpectMoreSends"/>).
    /// </summary>
    internal void ExpectMoreSends()
    {
        if (CurrentConnection is { } connection)
            CallbackScope.ExpectMoreSends(connection);
    }
}
