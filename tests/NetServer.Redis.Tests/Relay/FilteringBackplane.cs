using System;
using System.Threading;
using System.Threading.Tasks;
using NetServer.P2P;
using NetServer.P2P.Wire;

namespace NetServer.Redis.Tests.Relay;

/// <summary>
/// A backplane around the Redis one that keeps this node's messages of one kind (<see cref="Kind"/>,
/// none while null) from the others: refused (as a full or disconnected backplane does) or, with
/// <see cref="Silently"/>, reported taken and lost (as when Redis blinks). Everything else passes.
/// </summary>
internal sealed class FilteringBackplane(IRelayBackplane inner) : IRelayBackplane
{
    private int _filtered;
    private volatile int _kind = -1;

    public ClusterKind? Kind
    {
        get => _kind < 0 ? null : (ClusterKind)_kind;
        set => _kind = value is { } kind ? (int)kind : -1;
    }

    /// <summary>Report the filtered messages as published (lost on the way) rather than refused.</summary>
    public bool Silently { get; init; }

    /// <summary>Messages kept from the other nodes so far.</summary>
    public int Filtered => Volatile.Read(ref _filtered);

    public Guid NodeId => inner.NodeId;

    public bool IsConnected => inner.IsConnected;

    public void Attach(IRelayNodeReceiver receiver) => inner.Attach(receiver);

    public void Detach(IRelayNodeReceiver receiver) => inner.Detach(receiver);

    public Task<bool> PublishAsync(Guid node, ReadOnlyMemory<byte> message, RelayNodeTraffic traffic)
    {
        if (ClusterMessage.TryReadKind(message.Span, out var kind) && (int)kind == _kind)
        {
            Interlocked.Increment(ref _filtered);
            return Task.FromResult(Silently);
        }

        return inner.PublishAsync(node, message, traffic);
    }
}
