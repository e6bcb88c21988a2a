using System;
using System.Globalization;
using System.Net;
using System.Security.Authentication;
using NetServer.P2P;

namespace NetServer.Examples.Relay;

/// <summary>A relay that says who comes and goes.</summary>
internal sealed class ConsoleRelay(SslContext context, IPAddress address, int port, RelayServerOptions options)
    : RelayServer(context, address, port, options)
{
    protected override void OnPeerRegistered(RelayPeer peer) => Console.WriteLine($"Registered: {peer} ({PeerCount} peers)");

    protected override void OnPeerLeft(RelayPeer peer, DisconnectReason reason) => Console.WriteLine($"Left: {peer}, {reason} ({PeerCount} peers)");
}

internal static class Program
{
    private const int DefaultPort = 7000;
    private const string Usage = "Usage: RelayServer [port] [address] [--certs DIR]";

    /// <summary>
    /// RelayServer [port] [address] [--certs DIR]: a relay on 127.0.0.1:7000 over TLS with the
    /// repository's test certificate. At the console: "peers" lists the peers with their figures,
    /// "stats" prints the totals, an empty line (or the end of input) stops it.
    /// </summary>
    private static int Main(string[] args)
    {
        if (CommandLine.Parse(args, Usage, switches: [], options: [CertificateFolder.Option]) is not { } line)
            return 2;
        var port = line.Positional(0) is { } portText ? int.Parse(portText, CultureInfo.InvariantCulture) : DefaultPort;
        var address = line.Positional(1) is { } addressText ? IPAddress.Parse(addressText) : IPAddress.Loopback;
        using var certificates = CertificateFolder.Open(line.ValueOf(CertificateFolder.Option));
        if (certificates?.Load(CertificateFolder.ServerFile) is not { } certificate)
            return 1;

        // The defaults (docs/p2p.md, "Limits"), but every peer of a demo on one machine comes from one address.
        var options = new RelayServerOptions { MaxPeersPerAddress = 0 };
        using var relay = new ConsoleRelay(new SslContext(SslProtocols.None, certificate), address, port, options);
        if (!relay.Start())
        {
            Console.WriteLine($"Could not listen on {address}:{port}.");
            return 1;
        }

        Console.WriteLine($"Listening on {relay.Endpoint}");
        Console.WriteLine("Type 'peers' or 'stats'; an empty line stops the relay.");
        while (Console.ReadLine() is { Length: > 0 } command)
        {
            if (command == "peers")
            {
                foreach (var peer in relay.GetPeers())
                {
                    if (relay.TryGetPeerStatistics(peer.Id, out var statistics))
                        Console.WriteLine($"  {statistics} from {statistics!.RemoteEndPoint}");
                }
            }
            else if (command == "stats")
            {
                Console.WriteLine($"  {relay.GetStatistics()}");
            }
            else
            {
                Console.WriteLine("Type 'peers' or 'stats'; an empty line stops the relay.");
            }
        }

        relay.Stop();
        Console.WriteLine("Stopped.");
        return 0;
    }
}
