using System;
using System.Diagnostics;
using System.Threading;
using System.Threading.Channels;
using System.Threading.Tasks;
using StackExchange.Redis;

namespace NetServer.Redis;

// The receiving side. StackExchange.Redis puts each message of a subscribed channel into that
// channel's ChannelMessageQueue, which has no bound: a node that handles frames slower than the
// others publish them would hold ever more. So a pump that only counts empties each of those queues
// at once into a queue of this node's, and the frames are handled from there, one at a time per
// channel (the order per sender that docs/scale-out.md promises; the handler form of Subscribe may
// run a channel's messages concurrently). The frames waiting in this node's queues are bounded
// together: past MaxReceiveBacklog a frame is dropped unhandled and counted, as Redis pub/sub drops
// what a disconnected node misses (at most once either way). A relay's control frames have
// ControlReceiveReserve frames more, so that peer traffic cannot make a live node look dead.
// Everything the pump and the handler call that is not the backplane's own (a local delivery, a
// relay's callbacks, a PublishFailed handler, a trace or meter listener) may throw: each call is
// isolated (Isolate, TraceSafely), so a channel is never left unread and no failure goes unseen.
public sealed partial class RedisBackplane
{
    /// <summary>Publishes in flight that a relay's control frames (heartbeats, registry, goodbye) may use beyond <see cref="BackplaneOptions.MaxPendingPublishes"/>, which sends and peer traffic cannot touch.</summary>
    internal const int ControlPublishReserve = 256;

    /// <summary>Control frames that may wait here beyond <see cref="BackplaneOptions.MaxReceiveBacklog"/>.</summary>
    internal const int ControlReceiveReserve = 1024;

    /// <summary>Bytes of control frames that may wait here beyond <see cref="BackplaneOptions.MaxReceiveBacklogBytes"/>.</summary>
    internal const long ControlReceiveReserveBytes = 16L << 20;

    private long _waiting, _waitingBytes, _receiveDropped, _callbackFailures;
    private int _overflowing, _oversizedTraced;

    /// <summary>
    /// Frames from other nodes dropped unhandled because <see cref="BackplaneOptions.MaxReceiveBacklog"/>
    /// frames or <see cref="BackplaneOptions.MaxReceiveBacklogBytes"/> bytes were already waiting to be
    /// handled here (this node is slower than the others publish), or because the frame alone is
    /// larger than <see cref="BackplaneOptions.MaxReceiveBacklogBytes"/> (it could never be taken).
    /// </summary>
    public long ReceiveDropped => Interlocked.Read(ref _receiveDropped);

    /// <summary>
    /// Calls into code that is not the backplane's that threw, each isolated so that the backplane
    /// went on: an <see cref="ILocalDelivery"/> send (the other sessions of a group still got the
    /// message), a <see cref="PublishFailed"/> handler (the send still returned false), a relay's
    /// handler of another node's frame, a trace or meter listener. Each is also traced on
    /// <see cref="System.Diagnostics.Trace"/>, unless the trace is what threw.
    /// </summary>
    public long CallbackFailures => Interlocked.Read(ref _callbackFailures);

    /// <summary>Frames from other nodes waiting to be handled now (the one being handled included).</summary>
    internal long ReceiveBacklog => Interlocked.Read(ref _waiting);

    /// <summary>
    /// Reads <paramref name="channel"/> in order through a bounded queue of this node's. What
    /// <paramref name="wanted"/> refuses is skipped before it takes a place (frames for another node);
    /// a frame dropped over the bound is shown to <paramref name="dropped"/>, if given, before it goes
    /// (every one: it is the callback's to decide what a drop is worth answering).
    /// </summary>
    private async Task SubscribeInOrderAsync(ISubscriber subscriber, RedisChannel channel, Action<RedisValue> handle, Func<RedisValue, bool>? wanted = null, Action<RedisValue>? dropped = null)
    {
        var source = await subscriber.SubscribeAsync(channel).ConfigureAwait(false);
        var waiting = Channel.CreateUnbounded<RedisValue>(new UnboundedChannelOptions { SingleReader = true, SingleWriter = true });
        _ = PumpAsync(source, waiting.Writer, wanted, dropped);
        _ = HandleAsync(waiting.Reader, handle);
    }

    /// <summary>Moves every message of <paramref name="source"/> to <paramref name="waiting"/> as it comes, or drops it over the bound.</summary>
    private async Task PumpAsync(ChannelMessageQueue source, ChannelWriter<RedisValue> waiting, Func<RedisValue, bool>? wanted, Action<RedisValue>? dropped)
    {
        try
        {
            while (true)
            {
                var message = await source.ReadAsync(CancellationToken.None).ConfigureAwait(false);
                do
                {
                    var frame = message.Message;
                    try
                    {
                        if (wanted is not null && !wanted(frame))
                            continue;
                        if (Admit(frame))
                            waiting.TryWrite(frame);
                        else
                            dropped?.Invoke(frame);
                    }
                    catch (Exception e)
                    {
                        // One frame's trouble (a drop callback that threw) must not stop this channel: an
                        // unread channel would grow the client library's own queue without bound.
                        Isolate("taking a frame from another node (the drop callback)", e);
                    }
                }
                while (source.TryRead(out message));
            }
        }
        catch (Exception e) when (e is ChannelClosedException or OperationCanceledException or ObjectDisposedException)
        {
            // The subscription ended with the connection (the backplane was disposed): nothing more comes.
        }
        catch (Exception e)
        {
            TraceSafely(TraceEventType.Error, "reading a channel stopped: {1}", e);
        }
        finally
        {
            waiting.TryComplete();
        }
    }

    private async Task HandleAsync(ChannelReader<RedisValue> waiting, Action<RedisValue> handle)
    {
        while (await waiting.WaitToReadAsync().ConfigureAwait(false))
        {
            while (waiting.TryRead(out var frame))
            {
                try
                {
                    handle(frame);
                }
                catch (Exception e)
                {
                    // A relay's handler that threw: the channel's next messages still come.
                    Isolate("handling a frame from another node", e);
                }
                finally
                {
                    // After the handler: the frame's bytes are held until then.
                    Interlocked.Add(ref _waitingBytes, -((ReadOnlyMemory<byte>)frame).Length);
                    Interlocked.Decrement(ref _waiting);
                }
            }
        }
    }

    /// <summary>Takes a frame into the backlog, or counts it dropped (traced once per overflow, not once per frame).</summary>
    private bool Admit(RedisValue frame)
    {
        long limit = _options.MaxReceiveBacklog;
        var byteLimit = _options.MaxReceiveBacklogBytes;
        if (IsControl(frame))
        {
            limit += ControlReceiveReserve;
            byteLimit = byteLimit > long.MaxValue - ControlReceiveReserveBytes ? long.MaxValue : byteLimit + ControlReceiveReserveBytes; // long.MaxValue: no bound, not a negative one
        }

        long length = ((ReadOnlyMemory<byte>)frame).Length;
        if (length > byteLimit)
        {
            // It could never be taken, however empty the backlog: dropped at once, before it is
            // counted in (where it would make the other channels' frames look over the bound).
            Interlocked.Increment(ref _receiveDropped);
            if (Interlocked.Exchange(ref _oversizedTraced, 1) == 0)
                TraceSafely(TraceEventType.Warning, "dropped a frame of {1} bytes from another node: larger than BackplaneOptions.MaxReceiveBacklogBytes ({2}), it can never be taken; this and any other such frame is counted in ReceiveDropped (traced once).", length, byteLimit);
            return false;
        }

        var count = Interlocked.Increment(ref _waiting);
        var bytes = Interlocked.Add(ref _waitingBytes, length);
        if (count <= limit && bytes <= byteLimit)
        {
            if (Volatile.Read(ref _overflowing) != 0)
                Volatile.Write(ref _overflowing, 0);
            return true;
        }

        Interlocked.Add(ref _waitingBytes, -length);
        Interlocked.Decrement(ref _waiting);
        Interlocked.Increment(ref _receiveDropped);
        if (Interlocked.Exchange(ref _overflowing, 1) == 0)
            TraceSafely(TraceEventType.Warning, "drops frames from other nodes: {1} frames of {2} bytes are waiting to be handled (BackplaneOptions.MaxReceiveBacklog {3}, MaxReceiveBacklogBytes {4}).", count - 1, bytes - length, limit, byteLimit);
        return false;
    }

    private static bool IsControl(RedisValue frame)
    {
        ReadOnlyMemory<byte> bytes = frame;
        return bytes.Length > 1 && bytes.Span[1] == (byte)FrameKind.NodeControl;
    }

    /// <summary>Counts a call into code not the backplane's that threw (<paramref name="what"/> was going on) and traces it.</summary>
    private void Isolate(string what, Exception e)
    {
        Interlocked.Increment(ref _callbackFailures);
        TraceSafely(TraceEventType.Error, "{1} threw, the backplane goes on (counted in CallbackFailures): {2}", what, e);
    }

    /// <summary>
    /// Writes to <see cref="System.Diagnostics.Trace"/>, as "NetServer.Redis node {0}: " and <paramref name="format"/>
    /// ({0} is this node's id). A listener that throws is counted in <see cref="CallbackFailures"/>:
    /// a trace must not end a pump, and there is nothing left to tell it with.
    /// </summary>
    private void TraceSafely(TraceEventType type, string format, params object?[] args)
    {
        var all = new object?[args.Length + 1];
        all[0] = NodeId;
        args.CopyTo(all, 1);
        try
        {
            if (type == TraceEventType.Error)
                Trace.TraceError("NetServer.Redis node {0}: " + format, all);
            else
                Trace.TraceWarning("NetServer.Redis node {0}: " + format, all);
        }
        catch (Exception)
        {
            Interlocked.Increment(ref _callbackFailures);
        }
    }
}
