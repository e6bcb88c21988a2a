using System.Collections.Generic;

namespace NetServer.WebSockets;

// Awaited and blocking receives: when the application does not override the receive hooks, their
// default copies each message into a bounded queue (a client's by default; a session's once one of
// these is first called). While the queue is over its limit the connection stops reading, so a
// peer that sends faster than the application takes messages is slowed down by TCP.
internal sealed partial class WebSocketProtocol
{
    public ValueTask<ReceivedMessage> ReceiveAsync(CancellationToken cancellationToken)
    {
        QueueMessages = true;
        return _inbox.ReceiveAsync(Connection, ReceiveQueueLimit, cancellationToken);
    }

    public IAsyncEnumerable<ReceivedMessage> ReceiveAllAsync(CancellationToken cancellationToken)
    {
        QueueMessages = true;
        return _inbox.ReceiveAllAsync(Connection, ReceiveQueueLimit, cancellationToken);
    }

    /// <summary>The next message as text, waiting for it (NetCoreServer's blocking ReceiveText); empty once the connection is down.</summary>
    public string ReceiveText()
    {
        using var message = TakeBlocking();
        return message?.Text ?? string.Empty;
    }

    /// <summary>The next message's bytes, waiting for it; empty once the connection is down.</summary>
    public Buffer ReceiveBinary()
    {
        using var message = TakeBlocking();
        var buffer = new Buffer();
        if (message is not null)
            buffer.Append(message.Span);
        return buffer;
    }

    private ReceivedMessage? TakeBlocking()
    {
        if (CallbackScope.IsActive)
            ThrowHelper.ThrowInvalidOperation("A blocking receive inside a hook would wait for the very delivery it holds up: use the hooks, or ReceiveMessageAsync.");
        QueueMessages = true;
        return _inbox.Take(Connection, ReceiveQueueLimit);
    }
}
