using System;
using System.Diagnostics;
using System.Globalization;
using System.Linq;
using System.Net;
using System.Security.Cryptography.X509Certificates;
using System.Text;
using System.Threading.Tasks;

namespace NetServer.P2P.NatAgent;

/// <summary>
/// <c>peer CA RELAY_ADDRESS:PORT NAME [KEEPALIVE_MS]</c>: a <see cref="RelayClient"/> trusting the
/// CA in the file CA; start line <c>registered id=ID udp=ok|blocked reflexive=EP|none</c>. Commands
/// (one reply each):
/// <list type="bullet">
/// <item><c>find NAME [WAIT_MS]</c>: <c>found name=NAME id=ID</c> or <c>timeout wait_ms=N</c>;</item>
/// <item><c>punch ID TIMEOUT_MS</c>: <c>punched peer=ID path=direct|relayed ms=N</c>;</item>
/// <item><c>send ID TEXT</c>: <c>sent peer=ID path=direct|relayed</c>;</item>
/// <item><c>path ID</c>: <c>path peer=ID path=direct|relayed</c>;</item>
/// <item><c>stats ID</c>: <c>stats peer=ID direct_sent=N relayed_sent=N auth_failures=N replays=N punches=N successes=N</c>.</item>
/// </list>
/// Events: <c>datagram from=ID path=direct|relayed text=T</c>, <c>path-changed peer=ID path=…</c>.
/// </summary>
internal sealed class PeerMode : IAgentMode
{
    private readonly AgentPeer _client;

    private PeerMode(AgentPeer client) => _client = client;

    public static PeerMode Create(string[] args)
    {
        if (args.Length is < 3 or > 4)
            throw new AgentUsageException("peer: CA RELAY_ADDRESS:PORT NAME [KEEPALIVE_MS]");
        var context = new SslContext();
        context.TrustedCertificateAuthorities.Add(X509CertificateLoader.LoadCertificateFromFile(args[0]));
        var client = new AgentPeer(context, IPEndPoint.Parse(args[1])) { Name = args[2] };
        if (args.Length == 4)
            client.KeepaliveInterval = TimeSpan.FromMilliseconds(int.Parse(args[3], CultureInfo.InvariantCulture));
        return new PeerMode(client);
    }

    public async Task StartAsync()
    {
        await _client.ConnectAsync();
        var udp = await _client.UdpReady;
        AgentOutput.Line($"registered id={_client.PeerId} udp={(udp ? "ok" : "blocked")} reflexive={_client.ServerReflexiveEndpoint?.ToString() ?? "none"}");
    }

    public async Task RunAsync(string[] words)
    {
        switch (words[0])
        {
            case "find":
                var name = AgentOutput.Word(words, 1);
                var clock = Stopwatch.StartNew();
                var wait = AgentOutput.WaitMilliseconds(words, 2);
                while (clock.ElapsedMilliseconds < wait)
                {
                    if (_client.GetPeers().FirstOrDefault(p => p.Name == name) is { } found)
                    {
                        AgentOutput.Line($"found name={name} id={found.Id}");
                        return;
                    }

                    await Task.Delay(20);
                }

                AgentOutput.Line($"timeout wait_ms={wait}");
                break;
            case "punch":
                var peer = Guid.Parse(AgentOutput.Word(words, 1));
                var timeout = TimeSpan.FromMilliseconds(AgentOutput.WaitMilliseconds(words, 2));
                var punchClock = Stopwatch.StartNew();
                var path = await _client.ConnectDirectAsync(peer, timeout);
                AgentOutput.Line($"punched peer={peer} path={Name(path)} ms={punchClock.ElapsedMilliseconds}");
                break;
            case "send":
                var to = Guid.Parse(AgentOutput.Word(words, 1));
                var sent = await _client.SendDatagramAsync(to, Encoding.ASCII.GetBytes(AgentOutput.Word(words, 2)));
                AgentOutput.Line(sent ? $"sent peer={to} path={Name(_client.GetPath(to))}" : $"error send: not sent to {to}");
                break;
            case "path":
                var of = Guid.Parse(AgentOutput.Word(words, 1));
                AgentOutput.Line($"path peer={of} path={Name(_client.GetPath(of))}");
                break;
            case "stats":
                var id = Guid.Parse(AgentOutput.Word(words, 1));
                var s = _client.GetStatistics(id);
                AgentOutput.Line(s is null ? $"error stats: no peer {id}" :
                    $"stats peer={id} direct_sent={s.DatagramBytesSentDirect} relayed_sent={s.DatagramBytesSentRelayed} auth_failures={s.AuthenticationFailures} replays={s.ReplaysDropped} punches={s.PunchAttempts} successes={s.PunchSuccesses}");
                break;
            default:
                throw new AgentUsageException($"peer: unknown command '{words[0]}' (find | punch | send | path | stats | quit)");
        }
    }

    public async ValueTask DisposeAsync() => await _client.DisposeAsync();

    internal static string Name(RelayPath path) => path == RelayPath.Direct ? "direct" : "relayed";

    private sealed class AgentPeer(SslContext context, IPEndPoint relay) : RelayClient(context, relay)
    {
        protected override void OnDatagram(Guid peer, ReadOnlySpan<byte> payload, RelayPath path) =>
            AgentOutput.Line($"datagram from={peer} path={PeerMode.Name(path)} {AgentOutput.Describe(payload)}");

        protected override void OnPathChanged(Guid peer, RelayPath path) =>
            AgentOutput.Line($"path-changed peer={peer} path={PeerMode.Name(path)}");
    }
}
