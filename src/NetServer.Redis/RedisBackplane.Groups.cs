using System;
using System.Threading;
using System.Threading.Tasks;
using System.Collections.Generic;
using System.Collections.Concurrent;
using StackExchange.Redis;

namespace NetServer.Redis;

public sealed partial class RedisBackplane
{
    /// <summary>
    /// Adds a local session to a group. Delivery starts at once (local map); the Redis set that lists members across
    /// nodes is updated in the background, a failure reported by <see cref="PublishFailed"/>.
    /// </summary>
    public void JoinGroup(string group, Guid sessionId)
    {
        ArgumentNullException.ThrowIfNull(group);
        BackplaneFrame.ValidateGroup(group);
        _groups.GetOrAdd(group, _ => new ConcurrentDictionary<Guid, byte>())[sessionId] = 0;
        _ = UpdateRedisAsync(db => db.SetAddAsync(GroupKey(group), MemberValue(sessionId)));
    }

    /// <summary>Takes a local session out of a group.</summary>
    public void LeaveGroup(string group, Guid sessionId)
    {
        ArgumentNullException.ThrowIfNull(group);
        if (_groups.TryGetValue(group, out var members) && members.TryRemove(sessionId, out _))
        {
            if (members.IsEmpty)
                _groups.TryRemove(new KeyValuePair<string, ConcurrentDictionary<Guid, byte>>(group, members));
            _ = UpdateRedisAsync(db => db.SetRemoveAsync(GroupKey(group), MemberValue(sessionId)));
        }
    }

    /// <summary>Takes a local session out of every group; call it from the session's disconnect hook.</summary>
    public void LeaveAllGroups(Guid sessionId)
    {
        foreach (var group in _groups.Keys)
            LeaveGroup(group, sessionId);
    }

    /// <summary>
    /// The members of a group across nodes, as (node, session) pairs. Members of nodes whose presence key expired
    /// (the node died) are left out and removed from Redis on the way.
    /// </summary>
    public async Task<IReadOnlyList<(Guid Node, Guid Session)>> GetGroupMembersAsync(string group)
    {
        var db = (_redis ?? throw new InvalidOperationException("The backplane is not started.")).GetDatabase();
        var values = await db.SetMembersAsync(GroupKey(group)).ConfigureAwait(false);
        var alive = new Dictionary<Guid, bool>();
        var members = new List<(Guid, Guid)>(values.Length);
        foreach (var value in values)
        {
            var text = value.ToString();
            if (text.Length != 73 || !Guid.TryParse(text.AsSpan(0, 36), out var node) || !Guid.TryParse(text.AsSpan(37), out var session))
                continue;
            if (!alive.TryGetValue(node, out var isAlive))
                alive[node] = isAlive = await db.KeyExistsAsync(NodeKey(node)).ConfigureAwait(false);
            if (isAlive)
                members.Add((node, session));
            else
                await db.SetRemoveAsync(GroupKey(group), value).ConfigureAwait(false);
        }
        return members;
    }

    // Tests simulate a node that dies: no more refreshes, nothing cleaned up.
    internal void StopPresenceForTest() => _presenceTimer?.Dispose();

    private async Task RefreshPresenceAsync()
    {
        await UpdateRedisAsync(db => db.StringSetAsync(NodeKey(NodeId), 1, _options.PresenceTtl)).ConfigureAwait(false);
    }

    private async Task UpdateRedisAsync(Func<IDatabase, Task> update)
    {
        var redis = _redis;
        if (redis is null)
            return;
        try
        {
            await update(redis.GetDatabase()).ConfigureAwait(false);
        }
        catch (Exception e) when (e is RedisException or TimeoutException)
        {
            Interlocked.Increment(ref _publishFailures);
            Report(new BackplaneUnavailableException("Redis did not take a group or presence update.", e));
        }
    }

    private RedisKey GroupKey(string group) => _options.Prefix + ":members:" + group;

    private RedisKey NodeKey(Guid node) => _options.Prefix + ":node:" + node.ToString("D");

    private RedisValue MemberValue(Guid session) => NodeId.ToString("D") + ":" + session.ToString("D");
}
