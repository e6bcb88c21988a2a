using System.Collections.Generic;
using System.IO;
using System.Runtime.CompilerServices;

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
    public void Add(ReadOnlySpan<byte> message, StreamConnection connection, long limit, bool isText = false)
    {
        var item = new ReceivedMessage(message, isText);
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
            Monitor.PulseAll(_gate); // a blocking reader
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
            Monitor.PulseAll(_gate);
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

    /// <summary>The next message, waiting (blocking) until one arrives; null once the connection is down and the queue drained.</summary>
    public ReceivedMessage? Take(StreamConnection? connection, long limit)
    {
        lock (_gate)
        {
            while (_items.Count == 0 && _open)
                Monitor.Wait(_gate);
        }

        TryTake(connection, limit, out var message, out _);
        return message;
    }

    /// <summary>The next message: at once if one is queued, otherwise when one arrives. One reader at a time.</summary>
    /// <exception cref="IOException">The connection is down and no message is left.</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> fired while waiting.</exception>
    public ValueTask<ReceivedMessage> ReceiveAsync(StreamConnection? connection, long limit, CancellationToken cancellationToken)
    {
        if (TryTake(connection, limit, out var message, out var ended))
            return new ValueTask<ReceivedMessage>(message!);
        if (ended)
            return new ValueTask<ReceivedMessage>(Task.FromException<ReceivedMessage>(Ended()));
        return ReceiveSlowAsync(connection, limit, cancellationToken);
    }

    /// <summary>Every message, in order, until the connection is down and the queue drained, or <paramref name="cancellationToken"/> fires.</summary>
    public async IAsyncEnumerable<ReceivedMessage> ReceiveAllAsync(StreamConnection? connection, long limit, [EnumeratorCancellation] CancellationToken cancellationToken)
    {
        while (true)
        {
            if (TryTake(connection, limit, out var message, out var ended))
            {
                yield return message!;
                continue;
            }

            if (ended)
                yield break;
            await WaitAsync(WhenChanged(), cancellationToken).ConfigureAwait(false);
        }
    }

    private async ValueTask<ReceivedMessage> ReceiveSlowAsync(StreamConnection? connection, long limit, CancellationToken cancellationToken)
    {
        while (true)
        {
            await WaitAsync(WhenChanged(), cancellationToken).ConfigureAwait(false);
            if (TryTake(connection, limit, out var message, out var ended))
                return message!;
            if (ended)
                throw Ended();
        }
    }

    private static async Task WaitAsync(Task task, CancellationToken cancellationToken)
    {
        if (!cancellationToken.CanBeCanceled || task.IsCompleted)
        {
            await task.ConfigureAwait(false);
            return;
        }

        var cancelled = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
        using (cancellationToken.Register(static state => ((TaskCompletionSource<bool>)state!).TrySetResult(true), cancelled))
        {
            if (await Task.WhenAny(task, cancelled.Task).ConfigureAwait(false) != task)
                cancellationToken.ThrowIfCancellationRequested();
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
                ? "Not connected."
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
