using System;
using System.Net;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
using System.Threading.Tasks;

namespace NetServer.P2P.NatAgent;

/// <summary>
/// <c>relay PFX ADDRESS:PORT</c>: a <see cref="RelayServer"/> (TLS with the certificate in PFX, and
/// its UDP port on the same address); start line <c>relay tls=EP udp=PORT</c>. Commands:
/// <c>stats</c> answers <c>relay-stats peers=N forwarded=N dropped=N</c>.
/// </summary>
internal sealed class RelayMode(X509Certificate2 certificate, IPEndPoint endpoint) : IAgentMode
{
    private RelayServer? _relay;

    public static RelayMode Create(string[] args) => args.Length == 2
        ? new RelayMode(X509CertificateLoader.LoadPkcs12FromFile(args[0], null), IPEndPoint.Parse(args[1]))
        : throw new AgentUsageException("relay: PFX ADDRESS:PORT");

    public Task StartAsync()
    {
        _relay = new RelayServer(new SslContext(SslProtocols.None, certificate), endpoint);
        if (!_relay.Start())
            throw new InvalidOperationException("the relay did not start");
        AgentOutput.Line($"relay tls={_relay.Endpoint} udp={_relay.UdpPort}");
        return Task.CompletedTask;
    }

    public Task RunAsync(string[] words)
    {
        if (words[0] != "stats")
            throw new AgentUsageException($"relay: unknown command '{words[0]}' (stats | quit)");
        var udp = _relay!.Udp;
        AgentOutput.Line($"relay-stats peers={_relay.GetPeers().Count} forwarded={udp?.DatagramsForwarded ?? 0} dropped={udp?.DatagramsDropped ?? 0}");
        return Task.CompletedTask;
    }

    public ValueTask DisposeAsync()
    {
        _relay?.Dispose();
        certificate.Dispose();
        return ValueTask.CompletedTask;
    }
}
