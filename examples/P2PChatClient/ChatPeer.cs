using System;
using System.Collections.Concurrent;
using System.Linq;
using NetServer.P2P;
using NetServer.Protobuf;

namespace NetServer.Examples.P2PChat;

/// <summary>A chat peer: prints what the relay and the other peers send; answers questions by itself.</summary>
internal sealed class ChatPeer(SslContext context, string host, int port) : RelayClient(context, host, port)
{
    private readonly DateTime _started = DateTime.UtcNow;

    /// <summary>The rooms joined, by id (a room message carries the room's id as its addressee).</summary>
    public ConcurrentDictionary<Guid, string> RoomNames { get; } = new();

    /// <summary>The name of a peer in the list, or its id.</summary>
    public string NameOf(Guid id) => TryGetPeer(id, out var peer) && peer!.Name.Length > 0 ? peer.Name : id.ToString();

    /// <summary>The peer named <paramref name="name"/> (the first, if several share it).</summary>
    public RelayPeer? Find(string name) => GetPeers().FirstOrDefault(p => p.Name == name && p.Id != PeerId);

    protected override void OnRegistered() => Console.WriteLine($"Registered as {Name} ({PeerId})");

    protected override void OnPeerJoined(RelayPeer peer)
    {
        if (peer.Id != PeerId)
            Console.WriteLine($"* {peer.Name} joined (path: {GetPath(peer.Id).ToString().ToLowerInvariant()})");
    }

    protected override void OnPeerLeft(RelayPeer peer) => Console.WriteLine($"* {peer.Name} left");

    protected override void OnMessage(in ProtoMessage message)
    {
        var from = NameOf(message.From); // the relay wrote From: this is who really sent it
        if (message.IsRequest && message.HeaderEquals(Routes.Ask))
        {
            var question = message.Unpack<ChatLine>().Text;
            Console.WriteLine($"? {from} asks: {question}");
            Reply(in message, new ChatLine { Text = $"{Name} heard '{question}' after {(DateTime.UtcNow - _started).TotalSeconds:0} s online" });
            return;
        }

        if (!message.HeaderEquals(Routes.Say))
            return;
        var text = message.Unpack<ChatLine>().Text;
        var to = message.To;
        if (to == RelayAddresses.Everyone)
            Console.WriteLine($"<{from}> {text}");
        else if (to == PeerId)
            Console.WriteLine($"<{from} to you> {text}");
        else
            Console.WriteLine($"<{from} in {(RoomNames.TryGetValue(to, out var room) ? room : "a room")}> {text}");
    }

    protected override void OnDatagram(Guid peer, ReadOnlySpan<byte> payload, RelayPath path) =>
        Console.WriteLine($"<{NameOf(peer)} by udp, {path.ToString().ToLowerInvariant()}> {System.Text.Encoding.UTF8.GetString(payload)}");

    protected override void OnPathChanged(Guid peer, RelayPath path) => Console.WriteLine($"* path to {NameOf(peer)}: {path.ToString().ToLowerInvariant()}");

    protected override void OnDeliveryFailed(RelayDeliveryFailure failure) => Console.WriteLine($"! not delivered: {failure}");

    protected override void OnDisconnected(DisconnectReason reason) => Console.WriteLine($"Disconnected: {reason}");
}
