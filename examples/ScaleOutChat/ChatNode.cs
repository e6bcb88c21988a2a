using System;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Net.WebSockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Redis;

namespace NetServer.Examples.ScaleOutChat;

/// <summary>
/// One member: a WebSocket session in one room at a time. Rooms are backplane groups, so a message
/// reaches the room's members on every node. The member is named by its client address, which
/// behind HAProxy comes from the PROXY header (<see cref="StreamSession.RemoteEndPoint"/>).
/// </summary>
internal sealed class ChatMember(ChatNode node) : WsSession(node)
{
    private string? _room;

    public string Name => RemoteEndPoint?.ToString() ?? "?";

    public override void OnWsConnected(HttpRequest request)
    {
        SendTextAsync($"welcome node={node.Name} session={Id} room={ChatNode.FirstRoom}");
        Enter(ChatNode.FirstRoom);
    }

    public override void OnWsReceived(WebSocketMessageType type, byte[] buffer, long offset, long size)
    {
        if (type != WebSocketMessageType.Text || _room is not { } room)
            return;
        var text = Encoding.UTF8.GetString(buffer, (int)offset, (int)size);
        if (text.StartsWith("/join ", StringComparison.Ordinal) && text[6..].Trim() is { Length: > 0 } next)
        {
            Leave();
            Enter(next);
        }
        else if (text == "/who")
        {
            _ = node.WhoAsync(this, room);
        }
        else
        {
            node.Say(room, $"[{room}] {Name}@{node.Name}: {text}");
        }
    }

    protected override void OnDisconnected(DisconnectReason reason)
    {
        if (_room is not null)
            Leave();
    }

    protected override void OnError(SocketError error) => Console.WriteLine($"Session {Id} caught a socket error: {error}");

    private void Enter(string room)
    {
        _room = room;
        node.Backplane.JoinGroup(room, Id);
        Console.WriteLine($"{Name} (session {Id}) joined {room}");
        node.Say(room, $"* {Name} joined {room} on {node.Name}");
    }

    private void Leave()
    {
        var room = _room!;
        _room = null;
        node.Backplane.LeaveGroup(room, Id);
        Console.WriteLine($"{Name} (session {Id}) left {room}");
        node.Say(room, $"* {Name} left {room} on {node.Name}");
    }
}

/// <summary>
/// A chat node: a WebSocket server whose rooms span every node on the same Redis. Its
/// <see cref="ILocalDelivery"/> hands the backplane's messages to this process's members.
/// </summary>
internal sealed class ChatNode : WsServer
{
    public const string FirstRoom = "lobby";

    private int _redisDown;

    public ChatNode(IPAddress address, int port, string name, BackplaneOptions options) : base(address, port)
    {
        Name = name;
        Backplane = new RedisBackplane(
            new LocalDelivery((id, message) => FindSession(id) is WsSession member && member.SendTextAsync(message), MulticastText),
            options);
        Backplane.PublishFailed += OnPublishFailed;
    }

    public string Name { get; }

    public RedisBackplane Backplane { get; }

    /// <summary>Sends <paramref name="text"/> to the room's members here at once, and on the other nodes through Redis.</summary>
    public void Say(string room, string text) => _ = SayAsync(room, text);

    /// <summary>Answers "/who": the room's members on every live node, read from Redis.</summary>
    public async Task WhoAsync(ChatMember asker, string room)
    {
        try
        {
            var members = await Backplane.GetGroupMembersAsync(room).ConfigureAwait(false);
            asker.SendTextAsync($"who {room} {members.Count}: {string.Join(' ', members.Select(m => m.Session).Order())}");
        }
        catch (Exception e) when (e is StackExchange.Redis.RedisException or TimeoutException)
        {
            asker.SendTextAsync($"who {room} unavailable: Redis is down");
        }
    }

    private async Task SayAsync(string room, string text)
    {
        // Redis down: the members here got it already; say once that the other nodes do not, and once that they do again.
        if (await Backplane.SendToGroupAsync(room, Encoding.UTF8.GetBytes(text)).ConfigureAwait(false) && Interlocked.Exchange(ref _redisDown, 0) == 1)
            Console.WriteLine("Redis is back: messages reach the other nodes again");
    }

    private void OnPublishFailed(Exception e)
    {
        if (Interlocked.Exchange(ref _redisDown, 1) == 0)
            Console.WriteLine($"Redis unavailable, messages stay on this node: {e.Message}");
    }

    protected override TcpSession CreateSession() => new ChatMember(this);

    protected override void OnError(SocketError error) => Console.WriteLine($"The server caught a socket error: {error}");
}
