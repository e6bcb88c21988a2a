using System;
using System.Linq;
using System.Threading.Tasks;
using Xunit;

namespace NetServer.Redis.Tests.ScaleOut;

/// <summary>
/// examples/ScaleOutChat as deployed: nodes as separate processes on one Redis, behind a real
/// HAProxy (TCP mode, roundrobin, PROXY protocol). Clients land on different nodes and share a room;
/// a node killed with SIGKILL drops out of the room; Redis going away keeps each node's own room
/// talking, and cross-node delivery comes back with it.
/// </summary>
public sealed class ScaleOutChatTests
{
    private static readonly TimeSpan s_presenceTtl = TimeSpan.FromSeconds(2);

    [ScaleOutTheory]
    [InlineData("send-proxy-v2")]
    [InlineData("send-proxy")]
    public async Task Clients_on_three_nodes_share_a_room_and_are_named_by_their_real_address(string proxyOptions)
    {
        await using var cluster = await ChatCluster.StartAsync(3, proxyOptions, s_presenceTtl);
        var clients = new ChatClient[3];
        for (var i = 0; i < clients.Length; i++)
            clients[i] = await cluster.ConnectAsync();

        // Round-robin: three consecutive connections, three nodes.
        Assert.Equal(new[] { "node1", "node2", "node3" }, clients.Select(c => c.Node).Order());

        // Each join is announced to the room on every node, naming the client's own address and port
        // (from the PROXY header), not HAProxy's end of the node's connection.
        foreach (var joiner in clients)
        {
            var joined = $"* {joiner.LocalEndPoint} joined lobby on {joiner.Node}";
            await joiner.WaitForAsync(joined);
            foreach (var earlier in clients.TakeWhile(c => c != joiner))
                await earlier.WaitForAsync(joined);
        }

        foreach (var sender in clients)
            await sender.SayAsync($"hello from {sender.Node}");
        foreach (var receiver in clients)
        {
            foreach (var sender in clients)
                await receiver.WaitForAsync($"[lobby] {sender.LocalEndPoint}@{sender.Node}: hello from {sender.Node}");
        }

        // One message per send, however many nodes: no duplicates from Redis at the sender's node.
        Assert.Single(clients[0].Received, m => m.EndsWith($": hello from {clients[0].Node}", StringComparison.Ordinal));
        Assert.Equal(clients.Select(c => c.Session).Order(), await clients[0].WhoAsync());
    }

    [ScaleOutFact]
    public async Task A_killed_node_leaves_the_room_within_its_presence_expiry_and_the_others_keep_talking()
    {
        await using var cluster = await ChatCluster.StartAsync(3, "send-proxy-v2", s_presenceTtl);
        var first = await cluster.ConnectAsync();
        var doomed = await cluster.ConnectAsync();
        var last = await cluster.ConnectAsync();
        Assert.Equal(3, new[] { first.Node, doomed.Node, last.Node }.Distinct().Count());
        Assert.Contains(doomed.Session, await first.WhoAsync());

        await cluster.KillAsync(doomed.Node);
        var killed = DateTime.UtcNow;

        await first.SayAsync("still here");
        await last.WaitForAsync($"[lobby] {first.LocalEndPoint}@{first.Node}: still here");
        await last.SayAsync("me too");
        await first.WaitForAsync($"[lobby] {last.LocalEndPoint}@{last.Node}: me too");

        // The dead node cleaned nothing up; its member drops out once its presence key expired
        // (docs/scale-out.md: within the expiry of its last renewal, a third of it before the kill).
        var bound = s_presenceTtl + s_presenceTtl / 3 + TimeSpan.FromSeconds(3);
        Guid[] members;
        while ((members = await first.WhoAsync()).Contains(doomed.Session))
        {
            Assert.True(DateTime.UtcNow - killed < bound, $"The killed node's member is still listed after {bound.TotalSeconds} s.");
            await Task.Delay(200);
        }

        Assert.Equal(new[] { first.Session, last.Session }.Order(), members);
    }

    [ScaleOutFact]
    public async Task Redis_down_keeps_a_node_talking_and_cross_node_delivery_resumes_after_restart()
    {
        await using var cluster = await ChatCluster.StartAsync(2, "send-proxy-v2", s_presenceTtl);
        var a = await cluster.ConnectAsync();
        var other = await cluster.ConnectAsync();
        var b = await cluster.ConnectAsync();
        Assert.Equal(a.Node, b.Node); // round-robin over two nodes: the first and third connections share one
        Assert.NotEqual(a.Node, other.Node);
        await other.WaitForAsync($"* {b.LocalEndPoint} joined lobby on {b.Node}");

        await cluster.Redis.StopAsync();
        await a.SayAsync("while down");
        await b.WaitForAsync($"[lobby] {a.LocalEndPoint}@{a.Node}: while down");
        await b.SayAsync("still local");
        await a.WaitForAsync($"[lobby] {b.LocalEndPoint}@{b.Node}: still local");

        // The connection comes back by itself (retried every 500 ms); what is said then crosses nodes again.
        await cluster.Redis.RestartAsync();
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(20);
        for (var n = 0; !other.Received.Any(m => m.EndsWith(": after restart", StringComparison.Ordinal)); n++)
        {
            Assert.True(DateTime.UtcNow < deadline, $"Nothing crossed nodes 20 s after Redis restarted.{Environment.NewLine}{cluster.Transcripts}");
            await a.SayAsync("after restart");
            await Task.Delay(250);
        }

        await other.SayAsync("back");
        await b.WaitForAsync($"[lobby] {other.LocalEndPoint}@{other.Node}: back");
        // At most once: what was said while Redis was down never reaches the other node.
        Assert.DoesNotContain(other.Received, m => m.Contains("while down", StringComparison.Ordinal) || m.Contains("still local", StringComparison.Ordinal));
    }
}
