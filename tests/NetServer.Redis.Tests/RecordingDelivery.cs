using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Threading.Tasks;

namespace NetServer.Redis.Tests;

/// <summary>The local sessions of one node in a test: records what each got, signals when a text arrives.</summary>
internal sealed class RecordingDelivery : ILocalDelivery
{
    private readonly ConcurrentDictionary<Guid, ConcurrentQueue<string>> _sessions = new();
    private readonly ConcurrentDictionary<string, TaskCompletionSource> _waits = new();

    public Guid AddSession()
    {
        var id = Guid.NewGuid();
        _sessions[id] = new ConcurrentQueue<string>();
        return id;
    }

    public IReadOnlyCollection<string> Got(Guid session) => _sessions[session];

    public Task Arrived(Guid session, string text) => _waits.GetOrAdd(session + text, _ => new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)).Task;

    public bool SendToSession(Guid sessionId, ReadOnlySpan<byte> message)
    {
        if (!_sessions.TryGetValue(sessionId, out var queue))
            return false;
        var text = System.Text.Encoding.UTF8.GetString(message);
        queue.Enqueue(text);
        _waits.GetOrAdd(sessionId + text, _ => new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)).TrySetResult();
        return true;
    }

    public bool SendToAll(ReadOnlySpan<byte> message)
    {
        foreach (var id in _sessions.Keys)
            SendToSession(id, message);
        return true;
    }
}
