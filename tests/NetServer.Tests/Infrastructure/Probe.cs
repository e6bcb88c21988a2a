using System;
using System.Collections.Concurrent;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;

namespace NetServer.Tests.Infrastructure;

/// <summary>
/// Receives every hook of one session or client. Tests set the delegates they need and read
/// <see cref="Events"/> (hook names in the order they ran) to check ordering.
/// </summary>
public sealed class Probe
{
    private int _inReceived;

    public ConcurrentQueue<string> Events { get; } = new();

    public Action<StreamConnection>? Connected { get; set; }

    public Action<StreamConnection, byte[], long, long>? Received { get; set; }

    public Action<StreamConnection, long, long>? Sent { get; set; }

    public Action<StreamConnection>? Empty { get; set; }

    public Action<StreamConnection, SocketError>? Error { get; set; }

    public Action<StreamConnection, DisconnectReason>? Disconnected { get; set; }

    /// <summary>Completes when OnConnected has run.</summary>
    public TaskCompletionSource ConnectedSignal { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

    /// <summary>Completes with the reason when OnDisconnected has run.</summary>
    public TaskCompletionSource<DisconnectReason> DisconnectedSignal { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

    /// <summary>Whether a session of this probe joins its server's multicast when it is ready (default true).</summary>
    public bool AutoJoinMulticast { get; set; } = true;

    /// <summary>Set when OnReceived was ever entered while another OnReceived of the same connection ran.</summary>
    public bool ReceivedOverlapped { get; private set; }

    private int _disconnectedCount;
    private long _receivedBytes;

    /// <summary>How many times OnDisconnected ran.</summary>
    public int DisconnectedCount => Volatile.Read(ref _disconnectedCount);

    /// <summary>Bytes delivered to OnReceived so far (counted before the Received callback runs).</summary>
    public long ReceivedBytes => Interlocked.Read(ref _receivedBytes);

    internal void OnConnecting() => Events.Enqueue("connecting");

    internal void OnConnected(StreamConnection c)
    {
        Events.Enqueue("connected");
        Connected?.Invoke(c);
        ConnectedSignal.TrySetResult();
    }

    internal void OnDisconnecting() => Events.Enqueue("disconnecting");

    /// <summary>Completes when a TLS handshake succeeded (OnHandshaked ran).</summary>
    public TaskCompletionSource HandshakedSignal { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

    /// <summary>Completes with the exception when a TLS handshake failed (OnHandshakeFailed ran).</summary>
    public TaskCompletionSource<Exception> HandshakeFailedSignal { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

    /// <summary>Called when OnHandshaked runs, after the event is recorded.</summary>
    public Action<StreamConnection>? Handshaked { get; set; }

    /// <summary>
    /// Record the TLS hooks in <see cref="Events"/> too. Off by default, so the transport-neutral
    /// ordering tests see the same sequence over every transport; the TLS tests turn it on.
    /// </summary>
    public bool RecordHandshakes { get; set; }

    internal void OnHandshaking()
    {
        if (RecordHandshakes)
            Events.Enqueue("handshaking");
    }

    internal void OnHandshaked(StreamConnection c)
    {
        if (RecordHandshakes)
            Events.Enqueue("handshaked");
        Handshaked?.Invoke(c);
        HandshakedSignal.TrySetResult();
    }

    internal void OnHandshakeFailed(StreamConnection c, Exception exception)
    {
        if (RecordHandshakes)
            Events.Enqueue("handshake-failed");
        HandshakeFailedSignal.TrySetResult(exception);
    }

    internal void OnDisconnected(StreamConnection c, DisconnectReason reason)
    {
        Events.Enqueue("disconnected");
        Interlocked.Increment(ref _disconnectedCount);
        Disconnected?.Invoke(c, reason);
        DisconnectedSignal.TrySetResult(reason);
    }

    internal void OnReceived(StreamConnection c, byte[] buffer, long offset, long size)
    {
        if (Interlocked.Exchange(ref _inReceived, 1) != 0)
            ReceivedOverlapped = true;
        try
        {
            Events.Enqueue("received");
            // Counted before the callback: a callback that answers (an echo) lets the peer see the
            // answer, and a test that then looks at this count must see these bytes. A test that
            // needs what the callback did waits for that, not for this count.
            Interlocked.Add(ref _receivedBytes, size);
            Received?.Invoke(c, buffer, offset, size);
        }
        finally
        {
            Volatile.Write(ref _inReceived, 0);
        }
    }

    internal void OnSent(StreamConnection c, long sent, long pending) => Sent?.Invoke(c, sent, pending);

    internal void OnEmpty(StreamConnection c) => Empty?.Invoke(c);

    internal void OnError(StreamConnection c, SocketError error)
    {
        Events.Enqueue("error:" + error);
        Error?.Invoke(c, error);
    }
}
