using System;
using System.Linq;
using System.Text;
using System.Threading.Tasks;
using Xunit;

namespace NetServer.Redis.Tests;

public sealed class BackplaneTests
{
    private static readonly TimeSpan s_wait = TimeSpan.FromSeconds(10);

    private static byte[] Text(string text) => Encoding.UTF8.GetBytes(text);

    private static async Task<RedisBackplane> NodeAsync(RedisProcess redis, RecordingDelivery delivery, BackplaneOptions? options = null)
    {
        var node = new RedisBackplane(delivery, options);
        await node.StartAsync(redis.Configuration);
        return node;
    }

    [Fact]
    public void Frame_round_trips_group_session_and_all()
    {
        var node = Guid.NewGuid();
        var session = Guid.NewGuid();
        var frame = BackplaneFrame.Write(FrameKind.Group, node, Guid.Empty, "room-é", Text("hi"));
        Assert.True(BackplaneFrame.TryRead(frame, out var kind, out var readNode, out _, out var group, out var payload));
        Assert.Equal((FrameKind.Group, node, "room-é", "hi"), (kind, readNode, group, Encoding.UTF8.GetString(payload)));

        frame = BackplaneFrame.Write(FrameKind.Session, node, session, null, Text("x"));
        Assert.True(BackplaneFrame.TryRead(frame, out kind, out _, out var readSession, out _, out payload));
        Assert.Equal((FrameKind.Session, session, "x"), (kind, readSession, Encoding.UTF8.GetString(payload)));

        frame[0] = 99;
        Assert.False(BackplaneFrame.TryRead(frame, out _, out _, out _, out _, out _));
        Assert.False(BackplaneFrame.TryRead(frame.AsSpan(0, 5), out _, out _, out _, out _, out _));
    }

    [RedisFact]
    public async Task A_group_name_no_frame_can_carry_is_refused_before_anything_is_sent_or_counted()
    {
        await using var redis = await RedisProcess.StartAsync();
        var delivery = new RecordingDelivery();
        await using var node = await NodeAsync(redis, delivery, new BackplaneOptions { MaxPendingPublishes = 1 });
        var member = delivery.AddSession();

        // A lone surrogate would travel as U+FFFD (another group on other nodes); over 65,535 bytes does not fit.
        Assert.Throws<ArgumentException>(() => node.JoinGroup("x\uD800", member));
        for (var i = 0; i < 3; i++)
        {
            Assert.Throws<ArgumentException>(() => { _ = node.SendToGroupAsync("x\uD800", Text("no")); });
            Assert.Throws<ArgumentException>(() => { _ = node.SendToGroupAsync(new string('g', 70_000), Text("no")); });
        }

        // No in-flight slot was leaked by the refusals: with one slot, a good send still goes out.
        node.JoinGroup("room", member);
        Assert.True(await node.SendToGroupAsync("room", Text("ok")).WaitAsync(s_wait));
        Assert.Equal(0, node.Dropped);
    }

    [RedisFact]
    public async Task A_senders_group_and_session_sends_arrive_on_another_node_in_the_order_sent()
    {
        await using var redis = await RedisProcess.StartAsync();
        var d1 = new RecordingDelivery(); var d2 = new RecordingDelivery();
        await using var n1 = await NodeAsync(redis, d1, new BackplaneOptions { MaxPendingPublishes = 4096 });
        await using var n2 = await NodeAsync(redis, d2);
        Guid member = d2.AddSession(), direct = d2.AddSession();
        n2.JoinGroup("room", member); // delivery on n2 reads its own map of members

        const int count = 2000;
        var sends = new Task<bool>[count * 2];
        for (var i = 0; i < count; i++)
        {
            // Not awaited one by one: the publishes are in flight together, as a busy node's are.
            sends[2 * i] = n1.SendToGroupAsync("room", Text("g" + i));
            sends[(2 * i) + 1] = n1.SendToSessionAsync(direct, Text("s" + i));
        }

        Assert.All(await Task.WhenAll(sends).WaitAsync(s_wait), Assert.True);
        await Task.WhenAll(d2.Arrived(member, "g" + (count - 1)), d2.Arrived(direct, "s" + (count - 1))).WaitAsync(s_wait);
        Assert.Equal(Enumerable.Range(0, count).Select(i => "g" + i), d2.Got(member));
        Assert.Equal(Enumerable.Range(0, count).Select(i => "s" + i), d2.Got(direct));
    }

    [RedisFact]
    public async Task Group_session_and_all_sends_cross_three_nodes_once_per_send()
    {
        await using var redis = await RedisProcess.StartAsync();
        var d1 = new RecordingDelivery(); var d2 = new RecordingDelivery(); var d3 = new RecordingDelivery();
        await using var n1 = await NodeAsync(redis, d1);
        await using var n2 = await NodeAsync(redis, d2);
        await using var n3 = await NodeAsync(redis, d3);
        Guid a = d1.AddSession(), b = d2.AddSession(), c = d3.AddSession(), outsider = d3.AddSession();
        n1.JoinGroup("room", a); n2.JoinGroup("room", b); n3.JoinGroup("room", c);

        Assert.True(await n1.SendToGroupAsync("room", Text("g1")));
        await Task.WhenAll(d1.Arrived(a, "g1"), d2.Arrived(b, "g1"), d3.Arrived(c, "g1")).WaitAsync(s_wait);
        Assert.True(await n2.SendToSessionAsync(c, Text("direct")));
        await d3.Arrived(c, "direct").WaitAsync(s_wait);
        Assert.True(await n3.SendToAllAsync(Text("all")));
        await Task.WhenAll(d1.Arrived(a, "all"), d2.Arrived(b, "all"), d3.Arrived(outsider, "all")).WaitAsync(s_wait);

        Assert.Equal(1, n1.Published); // one publish for two remote members
        Assert.DoesNotContain("g1", d3.Got(outsider));
        Assert.Single(d1.Got(a), t => t == "g1"); // the sender's own node got it once, not again from Redis
        Assert.Equal(3, (await n1.GetGroupMembersAsync("room")).Count);

        n2.LeaveGroup("room", b);
        await n1.SendToGroupAsync("room", Text("g2"));
        await d3.Arrived(c, "g2").WaitAsync(s_wait);
        Assert.DoesNotContain("g2", d2.Got(b));
    }

    [RedisFact]
    public async Task Dead_node_leaves_the_groups_when_its_presence_expires()
    {
        await using var redis = await RedisProcess.StartAsync();
        var options = new BackplaneOptions { PresenceTtl = TimeSpan.FromSeconds(1), PresenceRefresh = TimeSpan.FromMilliseconds(300) };
        var d1 = new RecordingDelivery(); var d2 = new RecordingDelivery();
        await using var n1 = await NodeAsync(redis, d1, options);
        var n2 = await NodeAsync(redis, d2, options);
        n1.JoinGroup("room", d1.AddSession());
        n2.JoinGroup("room", d2.AddSession());
        await Task.Delay(200);
        Assert.Equal(2, (await n1.GetGroupMembersAsync("room")).Count);

        n2.StopPresenceForTest(); // dies: no refresh, no clean-up
        var deadline = DateTime.UtcNow + s_wait;
        while ((await n1.GetGroupMembersAsync("room")).Count != 1)
        {
            Assert.True(DateTime.UtcNow < deadline, "the dead node's member is still listed");
            await Task.Delay(200);
        }
        await n2.DisposeAsync(); // closes its connection; the test has checked what it needed
    }

    [RedisFact]
    public async Task Redis_down_keeps_local_delivery_reports_remote_failure_and_resumes()
    {
        await using var redis = await RedisProcess.StartAsync();
        var d1 = new RecordingDelivery(); var d2 = new RecordingDelivery();
        await using var n1 = await NodeAsync(redis, d1);
        await using var n2 = await NodeAsync(redis, d2);
        Guid a = d1.AddSession(), b = d2.AddSession();
        n1.JoinGroup("room", a); n2.JoinGroup("room", b);
        var failures = 0;
        n1.PublishFailed += _ => failures++;

        await redis.StopAsync();
        Assert.False(await n1.SendToGroupAsync("room", Text("down")).WaitAsync(s_wait));
        await d1.Arrived(a, "down").WaitAsync(s_wait);
        Assert.True(n1.PublishFailures >= 1 && failures >= 1);

        await redis.RestartAsync();
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(20);
        var n = 0;
        while (!d2.Arrived(b, "up" + n).IsCompleted)
        {
            Assert.True(DateTime.UtcNow < deadline, "cross-node delivery did not resume");
            n++;
            await n1.SendToGroupAsync("room", Text("up" + n));
            await Task.WhenAny(d2.Arrived(b, "up" + n), Task.Delay(300));
        }
        Assert.DoesNotContain("down", d2.Got(b));
    }
}
