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

    /// <summary>Publishes in flight at most; a send beyond it is dropped and counted. Default 10,000.</summary>
    public int MaxPendingPublishes { get; set; } = 10_000;
}
