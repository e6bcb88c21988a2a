using System;
using System.Linq;
using System.Threading.Tasks;
using NetServer.P2P.Tests.Infrastructure;
using NetServer.Protobuf;
using Xunit;

namespace NetServer.P2P.Tests.Relay;

/// <summary>Rooms: join, send once to every other member, leave, and the limits on names, rooms and members.</summary>
public sealed class RoomTests
{
    [Fact]
    public async Task A_message_to_a_room_reaches_its_other_members_only()
    {
        await using var harness = new RelayHarness();
        var peers = await harness.ConnectManyAsync(4);
        var rooms = await Task.WhenAll(peers.Take(3).Select(p => p.JoinRoomAsync("lobby")));
        Assert.All(rooms, r => Assert.Equal(rooms[0].Id, r.Id));
        Assert.Equal([1, 2, 3], rooms.Select(r => r.MembersAtJoin).Order()); // joined at once: in some order
        Assert.Equal(peers.Take(3).Select(p => p.PeerId).Order(), (await peers[0].GetRoomMembersAsync(rooms[0])).Order());

        Assert.True(peers[0].SendToRoom(rooms[0], new MessageEnvelope("hi"), new Sample { A = 1 }));
        await Wait.UntilAsync(() => peers[1].Received == 1 && peers[2].Received == 1, () => "the members to receive it");
        Assert.Equal(rooms[0].Id, peers[1].Messages.Single().To);
        Assert.Equal(peers[0].PeerId, peers[2].Messages.Single().From);

        // The outsider cannot send to it; the sender got no copy.
        Assert.True(peers[3].SendToRoom(rooms[0], new MessageEnvelope("let me in")));
        await Wait.UntilAsync(() => !peers[3].Failures.IsEmpty, () => "the refusal");
        Assert.Equal(RelayStatus.NotMember, peers[3].Failures.Single().Status);
        Assert.Equal(0, peers[0].Received);
        Assert.Equal(0, peers[3].Received);
        Assert.Equal(1, peers[1].Received);
    }

    [Fact]
    public async Task Leaving_a_room_stops_its_messages_and_the_last_member_out_ends_it()
    {
        await using var harness = new RelayHarness();
        var a = await harness.ConnectAsync("a");
        var b = await harness.ConnectAsync("b");
        var room = await a.JoinRoomAsync("r");
        var joined = await b.JoinRoomAsync("r");
        Assert.Equal(1, harness.Relay.RoomCount);

        await b.LeaveRoomAsync(joined);
        Assert.Equal([a.PeerId], await a.GetRoomMembersAsync(room));
        var notMember = await Assert.ThrowsAsync<RelayException>(() => b.LeaveRoomAsync(joined));
        Assert.Equal(RelayStatus.NotMember, notMember.Status);

        await a.LeaveRoomAsync(room);
        Assert.Equal(0, harness.Relay.RoomCount);

        // The same name later is a new room.
        var again = await a.JoinRoomAsync("r");
        Assert.NotEqual(room.Id, again.Id);
    }

    [Fact]
    public async Task A_peers_rooms_are_left_when_it_leaves()
    {
        await using var harness = new RelayHarness();
        var a = await harness.ConnectAsync("a");
        var b = await harness.ConnectAsync("b");
        var room = await a.JoinRoomAsync("r");
        await b.JoinRoomAsync("r");
        await b.DisconnectAsync();
        await Wait.UntilAsync(async () => (await a.GetRoomMembersAsync(room)).Count == 1, () => "b to be out of the room");
    }

    [Fact]
    public async Task Room_limits_are_refused_with_their_status()
    {
        var options = new RelayServerOptions { MaxRoomsPerPeer = 2, MaxMembersPerRoom = 2, MaxRooms = 3, MaxRoomNameLength = 8 };
        await using var harness = new RelayHarness(options);
        var a = await harness.ConnectAsync("a");
        var b = await harness.ConnectAsync("b");
        var c = await harness.ConnectAsync("c");

        await a.JoinRoomAsync("one");
        await a.JoinRoomAsync("two");
        Assert.Equal(RelayStatus.TooManyRooms, (await Assert.ThrowsAsync<RelayException>(() => a.JoinRoomAsync("three"))).Status);

        await b.JoinRoomAsync("one");
        Assert.Equal(RelayStatus.RoomFull, (await Assert.ThrowsAsync<RelayException>(() => c.JoinRoomAsync("one"))).Status);

        await c.JoinRoomAsync("three");
        Assert.Equal(RelayStatus.TooManyRooms, (await Assert.ThrowsAsync<RelayException>(() => c.JoinRoomAsync("four"))).Status); // 3 rooms on the relay

        Assert.Equal(RelayStatus.InvalidRequest, (await Assert.ThrowsAsync<RelayException>(() => b.JoinRoomAsync("far-too-long"))).Status);
        Assert.Equal(RelayStatus.InvalidRequest, (await Assert.ThrowsAsync<RelayException>(() => b.JoinRoomAsync(""))).Status);
        Assert.Equal(3, harness.Relay.RoomCount);
    }

    [Fact]
    public async Task A_request_to_a_room_is_refused()
    {
        await using var harness = new RelayHarness();
        var a = await harness.ConnectAsync("a");
        var room = await a.JoinRoomAsync("r");
        var refused = await Assert.ThrowsAsync<RelayException>(() => a.RequestAsync(room.Id, new MessageEnvelope("q"), TimeSpan.FromSeconds(10)));
        Assert.Equal(RelayStatus.Forbidden, refused.Status);
    }
}
