using System.Collections.Generic;
using System.IO;

namespace NetServer.Messaging;

/// <summary>
/// A client's queue of received messages for <c>ReceiveAsync</c>, bounded in bytes: receiving
/// pauses (TCP slows the peer down) while more than the limit waits, and resumes once the reader
/// has taken it down to half. One reader at a time.
/// </summary>
internal sealed class MessageInbox
{
    private readonly object _gate = new();
    private readonly Queue<ReceivedMessage> _items = new();
    private long _bytes;
    private bool _paused;
    private bool _open;
    private DisconnectReason _endReason = DisconnectReason.None;
    private TaskCompletionSource<bool>? _waiter;

    /// <summary>Messages waiting.</summary>
    public int Count
    {
        get
        {
            lock (_gate)
                return _items.Count;
        }
    }

    /// <summary>The connection is up: messages may come.</summary>
    public void Open()
    {
        lock (_gate)
            _open = true;
    }

    /// <summary>Queues a copy of <paramref name="message"/>; pauses <paramref name="connection"/> when over <paramref name="limit"/> bytes.</summary>
    public void Add(ReadOnlySpan<byte> message, StreamConnection connection, long limit)
    {
        var item = new ReceivedMessage(message);
        TaskCompletionSource<bool>? waiter;
        lock (_gate)
        {
            _items.Enqueue(item);
            _bytes += Math.Max(item.Length, 1);
            if (_bytes > limit && !_paused)
            {
                _paused = true;
                connection.PauseReceiving();
            }

            waiter = _waiter;
            _waiter = null;
        }

        waiter?.TrySetResult(true);
    }

    /// <summary>The connection ended: a waiting reader wakes; once the queue is drained, reads fail with the reason.</summary>
    public void End(DisconnectReason reason)
    {
        TaskCompletionSource<bool>? waiter;
        lock (_gate)
        {
            _open = false;
            _endReason = reason;
            _paused = false;
            waiter = _waiter;
            _waiter = null;
        }

        waiter?.TrySetResult(false);
    }

    /// <summary>Takes the next message; false with <paramref name="ended"/> when none is waiting and the connection is down.</summary>
    public bool TryTake(StreamConnection? connection, long limit, out ReceivedMessage? message, out bool ended)
    {
        lock (_gate)
        {
            ended = !_open && _items.Count == 0;
            if (_items.Count == 0)
            {
                message = null;
                return false;
            }

            message = _items.Dequeue();
            _bytes -= Math.Max(message.Length, 1);
            if (_paused && _bytes <= limit / 2)
            {
                _paused = false;
                connection?.ResumeReceiving();
            }

            return true;
        }
    }

    /// <summary>A task that completes when a message arrives or the connection ends (at once if either happened already).</summary>
    public Task WhenChanged()
    {
        lock (_gate)
        {
            if (_items.Count > 0 || !_open)
                return Task.CompletedTask;
            return (_waiter ??= new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously)).Task;
        }
    }

    /// <summary>The exception a read gets once the connection is down and the queue drained.</summary>
    public IOException Ended()
    {
        lock (_gate)
        {
            return new IOException(_endReason == DisconnectReason.None
                ? "The message client is not connected."
                : $"The connection closed ({_endReason}) and no message is left to receive.");
        }
    }

    /// <summary>Drops every message left (the client is disposed).</summary>
    public void Clear()
    {
        lock (_gate)
        {
            while (_items.Count > 0)
                _items.Dequeue().Dispose();
            _bytes = 0;
        }
    }
}
