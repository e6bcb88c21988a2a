using System;
using System.Net;
using System.Net.Sockets;
using System.Threading.Tasks;
using System.Collections.Concurrent;
using NetServer.Diagnostics;

namespace NetServer.Tests.Diagnostics;

/// <summary>Keeps every event as a line, and signals each kind of event once.</summary>
internal class RecordingListener : NetServerEventListener
{
    private readonly ConcurrentDictionary<string, TaskCompletionSource<string>> _signals = new();

    public ConcurrentQueue<string> Events { get; } = new();

    public Task<string> Next(string kind) => Signal(kind).Task.WaitAsync(TimeSpan.FromSeconds(10));

    public override void Listening(object source, EndPoint endpoint) => Record("Listening", $"{endpoint}");

    public override void Stopped(object source, EndPoint endpoint) => Record("Stopped", $"{endpoint}");

    public override void AcceptRefused(object source, EndPoint? remote, long sessionLimit) => Record("AcceptRefused", $"{remote} {sessionLimit}");

    public override void ConnectionClosed(object source, Guid id, EndPoint? remote, DisconnectReason reason, SocketError error) =>
        Record("ConnectionClosed", $"{remote} {reason} {error}");

    public override void ProtocolError(object source, Guid id, EndPoint? remote, string protocol, string error) =>
        Record("ProtocolError", $"{remote} {protocol} {error}");

    public override void TlsHandshakeFailed(object source, Guid id, EndPoint? remote, string error) => Record("TlsHandshakeFailed", $"{remote} {error}");

    public override void SendPaused(object source, Guid id, EndPoint? remote, long bytesPending) => Record("SendPaused", $"{remote} {bytesPending}");

    public override void MulticastDisconnect(object source, Guid id, EndPoint? remote, long bytesPending) => Record("MulticastDisconnect", $"{remote} {bytesPending}");

    protected virtual void Record(string kind, string text)
    {
        Events.Enqueue($"{kind} {text}");
        Signal(kind).TrySetResult(text);
    }

    private TaskCompletionSource<string> Signal(string kind) =>
        _signals.GetOrAdd(kind, _ => new TaskCompletionSource<string>(TaskCreationOptions.RunContinuationsAsynchronously));
}

/// <summary>Records, then throws from every event: the engine must not notice.</summary>
internal sealed class ThrowingListener : RecordingListener
{
    protected override void Record(string kind, string text)
    {
        base.Record(kind, text);
        throw new InvalidOperationException("A faulty listener.");
    }
}
