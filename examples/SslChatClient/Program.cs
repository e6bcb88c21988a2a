using System;
using System.Globalization;
using System.Net.Sockets;
using System.Security.Authentication;
using System.Threading.Tasks;

namespace NetServer.Examples.SslChatClient;

/// <summary>A TLS chat client; it reports the handshake and leaves everything else to the terminal.</summary>
internal sealed class ChatClient(SslContext context, string address, int port, ChatTerminal terminal) : SslClient(context, address, port)
{
    protected override void OnConnected() => terminal.Connected(this);

    protected override void OnHandshaked() => Console.WriteLine($"Secured: {TlsReport.Describe(Tls!, "server")}");

    protected override void OnHandshakeFailed(Exception exception) =>
        Console.WriteLine($"Handshake failed: {TlsReport.DescribeFailure(exception, $"a server certificate for {TargetHost} issued by a trusted CA")}");

    protected override void OnReceived(ReadOnlySpan<byte> buffer) => terminal.Received(buffer);

    protected override void OnDisconnected(DisconnectReason reason) => terminal.Disconnected(this, reason);

    protected override void OnError(SocketError error) => ChatTerminal.Error(error);
}

internal static class Program
{
    private const int DefaultPort = 2222;
    private const string PresentClientCertificate = "--client-cert";
    private const string Usage = "Usage: SslChatClient [address] [port] [--client-cert] [--certs DIR]";

    /// <summary>
    /// Usage: SslChatClient [address] [port] [--client-cert] [--certs DIR]. Defaults: 127.0.0.1,
    /// 2222. The server's certificate must be issued by the test CA for the address (or host
    /// name) given; --client-cert presents the test client certificate.
    /// </summary>
    private static async Task<int> Main(string[] args)
    {
        if (CommandLine.Parse(args, Usage, switches: [PresentClientCertificate], options: [CertificateFolder.Option]) is not { } line)
            return 2;
        var address = line.Positional(0) ?? "127.0.0.1";
        var port = line.Positional(1) is { } portText ? int.Parse(portText, CultureInfo.InvariantCulture) : DefaultPort;

        using var certificates = CertificateFolder.Open(line.ValueOf(CertificateFolder.Option));
        if (certificates?.Load(CertificateFolder.AuthorityFile) is not { } authority)
            return 1;
        var presentCertificate = line.Has(PresentClientCertificate);
        var certificate = presentCertificate ? certificates.Load(CertificateFolder.ClientFile) : null;
        if (presentCertificate && certificate is null)
            return 1;

        // The server is checked against the test CA and the address (TargetHost defaults to it):
        // trusting a private CA is all it takes, no "accept any certificate" switch.
        var context = certificate is null ? new SslContext() : new SslContext(SslProtocols.None, certificate);
        context.TrustedCertificateAuthorities.Add(authority);
        Console.WriteLine($"Trusting {authority.Subject} from {certificates.Location}; client certificate: {certificate?.Subject ?? "none"}");

        using var terminal = new ChatTerminal();
        using var client = new ChatClient(context, address, port, terminal) { OptionNoDelay = true };
        await terminal.RunAsync(client);
        return 0;
    }
}
