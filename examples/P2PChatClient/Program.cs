using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Threading.Tasks;
using NetServer.P2P;
using NetServer.Protobuf;

namespace NetServer.Examples.P2PChat;

internal static class Program
{
    private const int DefaultPort = 7000;
    private const string Usage = "Usage: P2PChatClient NAME [address] [port] [--certs DIR]";
    private static readonly TimeSpan s_timeout = TimeSpan.FromSeconds(5);

    private const string Help = """
        text                 to everyone
        /to NAME text        to one peer
        /join ROOM           join a room (made if new)
        /room ROOM text      to a room you joined
        /leave ROOM          leave it
        /ask NAME text       a request: NAME's client answers it
        /udp NAME text       a UDP datagram, sealed end to end: direct once punched, else through the relay
        /punch NAME          try to go direct to NAME (UDP hole punching); ends direct or relayed
        /peers               every peer, its path (direct or relayed) and round-trip time
        empty line           quit
        """;

    /// <summary>
    /// P2PChatClient NAME [address] [port] [--certs DIR]: registers as NAME with the relay at
    /// 127.0.0.1:7000, validating it against the test CA, and chats (see <see cref="Help"/>).
    /// </summary>
    private static async Task<int> Main(string[] args)
    {
        if (CommandLine.Parse(args, Usage, switches: [], options: [CertificateFolder.Option]) is not { } line || line.Positional(0) is not { } name)
        {
            Console.WriteLine(Usage);
            return 2;
        }

        var address = line.Positional(1) ?? "127.0.0.1";
        var port = line.Positional(2) is { } portText ? int.Parse(portText, CultureInfo.InvariantCulture) : DefaultPort;
        using var certificates = CertificateFolder.Open(line.ValueOf(CertificateFolder.Option));
        if (certificates?.Load(CertificateFolder.AuthorityFile) is not { } authority)
            return 1;
        var context = new SslContext();
        context.TrustedCertificateAuthorities.Add(authority);

        await using var peer = new ChatPeer(context, address, port) { Name = name };
        try
        {
            await peer.ConnectAsync();
        }
        catch (Exception e) when (e is RelayException or IOException or TimeoutException or System.Security.Authentication.AuthenticationException)
        {
            Console.WriteLine($"Could not join the relay at {address}:{port}: {e.Message}");
            return 1;
        }

        Console.WriteLine($"{peer.PeerCount} peers online. Commands:");
        Console.WriteLine(Help);
        var rooms = new Dictionary<string, RelayRoom>(StringComparer.Ordinal);
        while (Console.ReadLine() is { Length: > 0 } input && peer.IsRegistered)
        {
            try
            {
                await RunAsync(peer, rooms, input);
            }
            catch (Exception e) when (e is RelayException or TimeoutException or IOException)
            {
                Console.WriteLine($"! {e.GetType().Name}: {e.Message}");
            }
        }

        return 0;
    }

    private static async Task RunAsync(ChatPeer peer, Dictionary<string, RelayRoom> rooms, string input)
    {
        var (command, rest) = Split(input);
        var (target, text) = Split(rest);
        switch (command)
        {
            case "/to" when peer.Find(target) is { } to:
                peer.Send(to.Id, new MessageEnvelope(Routes.Say), new ChatLine { Text = text });
                break;
            case "/ask" when peer.Find(target) is { } asked:
                var answer = await peer.RequestAsync<ChatLine, ChatLine>(asked.Id, new MessageEnvelope(Routes.Ask), new ChatLine { Text = text }, s_timeout);
                Console.WriteLine($"= {asked.Name} answers: {answer.Text}");
                break;
            case "/udp" when peer.Find(target) is { } datagramTo:
                await peer.SendDatagramAsync(datagramTo.Id, System.Text.Encoding.UTF8.GetBytes(text));
                break;
            case "/punch" when peer.Find(target) is { } punched:
                var clock = System.Diagnostics.Stopwatch.StartNew();
                var reached = await peer.ConnectDirectAsync(punched.Id, TimeSpan.FromSeconds(10));
                Console.WriteLine($"* path to {punched.Name}: {reached.ToString().ToLowerInvariant()} after {clock.ElapsedMilliseconds} ms");
                break;
            case "/to" or "/ask" or "/udp" or "/punch":
                Console.WriteLine($"! no peer named '{target}'");
                break;
            case "/join":
                var room = await peer.JoinRoomAsync(rest);
                rooms[rest] = room;
                peer.RoomNames[room.Id] = room.Name;
                Console.WriteLine($"* in room {room.Name} with {room.MembersAtJoin - 1} other(s)");
                break;
            case "/room" when rooms.TryGetValue(target, out var joined):
                peer.SendToRoom(joined, new MessageEnvelope(Routes.Say), new ChatLine { Text = text });
                break;
            case "/leave" when rooms.Remove(rest, out var left):
                await peer.LeaveRoomAsync(left);
                peer.RoomNames.TryRemove(left.Id, out _);
                Console.WriteLine($"* left room {left.Name}");
                break;
            case "/room" or "/leave":
                Console.WriteLine($"! not in room '{target}'");
                break;
            case "/peers":
                await ListPeersAsync(peer);
                break;
            case not null when command.StartsWith('/'):
                Console.WriteLine(Help);
                break;
            default:
                peer.Broadcast(new MessageEnvelope(Routes.Say), new ChatLine { Text = input });
                break;
        }
    }

    private static async Task ListPeersAsync(ChatPeer peer)
    {
        Console.WriteLine($"relay: {(await peer.PingRelayAsync(s_timeout)).TotalMilliseconds:0.0} ms");
        foreach (var other in peer.GetPeers())
        {
            if (other.Id == peer.PeerId)
                continue;
            var path = peer.GetPath(other.Id).ToString().ToLowerInvariant();
            var rtt = await peer.PingAsync(other.Id, s_timeout);
            var statistics = peer.GetStatistics(other.Id);
            Console.WriteLine($"  {other.Name}: {path}, {rtt.TotalMilliseconds:0.0} ms, datagram bytes direct {statistics?.DatagramBytesSentDirect ?? 0} / relayed {statistics?.DatagramBytesSentRelayed ?? 0} sent");
        }
    }

    private static (string Head, string Tail) Split(string text)
    {
        var space = text.IndexOf(' ', StringComparison.Ordinal);
        return space < 0 ? (text, string.Empty) : (text[..space], text[(space + 1)..]);
    }
}
