using System;
namespace NetServer.Redis;

/// <summary>Settings of a <see cref="RedisBackplane"/>.</summary>
public sealed class BackplaneOptions
{
    /// <summary>Prefix of every Redis key and channel, so several applications share one Redis. Default "netserver".</summary>
    public string Prefix { get; set; } = "netserver";

    /// <summary>Expiry of this node's presence key; a node that dies leaves every group within this time plus <see cref="PresenceRefresh"/>. Default 10 s.</summary>
    public TimeSpan PresenceTtl { get; set; } = TimeSpan.FromSeconds(10);

    /// <summary>How often the presence key is renewed; must be well under <see cref="PresenceTtl"/>. Default 3 s.</summary>
    public TimeSpan PresenceRefresh { get; set; } = TimeSpan.FromSeconds(3);

    /// <summary>
    /// Publishes in flight at most; a send beyond it is dropped and counted (<see cref="RedisBackplane.Dropped"/>).
    /// A relay node's heartbeats and registry messages (<see cref="RedisRelayBackplane"/>) have a small reserve
    /// of their own above it, so that its peers' traffic cannot hold them back. Default 10,000.
    /// </summary>
    public int MaxPendingPublishes { get; set; } = 10_000;

    /// <summary>
    /// Frames from other nodes that may wait to be handled on this node at most (all channels together).
    /// A frame beyond it is dropped unhandled and counted (<see cref="RedisBackplane.ReceiveDropped"/>): a node
    /// slower than the others publish loses messages, as one that is disconnected does, instead of holding
    /// them without bound. A relay node's heartbeats and registry messages have a reserve of their own above
    /// it. Default 10,000; at least 1.
    /// </summary>
    public int MaxReceiveBacklog { get; set; } = 10_000;

    /// <summary>
    /// Bytes of frames from other nodes that may wait to be handled on this node at most (all channels
    /// together), beside <see cref="MaxReceiveBacklog"/>: a frame that would go past it is dropped and
    /// counted the same way, so large frames cannot hold more memory than this; a frame larger than it
    /// by itself is dropped at once. A relay node's control frames have a reserve of their own above it
    /// (16 MiB); keep it well above the relay's <c>MaxMessageSize</c>. Default 64 MiB; at least 1.
    /// </summary>
    public long MaxReceiveBacklogBytes { get; set; } = 64L << 20;
}
