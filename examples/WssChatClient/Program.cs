using System;
using System.Globalization;
using System.Net.Sockets;
using System.Threading.Tasks;

namespace NetServer.Examples.WssChatClient;

/// <summary>A WebSocket chat client over TLS; it reports the TLS handshake and leaves everything else to the terminal.</summary>
internal sealed class ChatClient(SslContext context, string address, int port, ChatTerminal terminal) : WssClient(context, address, port)
{
    protected override void OnHandshaked() => Console.WriteLine($"Secured: {TlsReport.Describe(Tls!, "server")}");

    protected override void OnHandshakeFailed(Exception exception) =>
        Console.WriteLine($"Handshake failed: {TlsReport.DescribeFailure(exception, $"a server certificate for {TargetHost} issued by a trusted CA")}");

    // Connected once the server has accepted the upgrade, not at TCP connect: only then can it chat.
    public override void OnWsConnected(HttpResponse response) => terminal.Connected(this);

    public override void OnWsReceived(byte[] buffer, long offset, long size) => ChatTerminal.ReceivedMessage(buffer.AsSpan((int)offset, (int)size));

    public override void OnWsClose(byte[] buffer, long offset, long size, int status) => ChatTerminal.Closed(status, buffer.AsSpan((int)offset, (int)size));

    public override void OnWsError(string error) => ChatTerminal.WebSocketError(error);

    protected override void OnDisconnected(DisconnectReason reason) => terminal.Disconnected(this, reason);

    protected override void OnError(SocketError error) => ChatTerminal.Error(error);
}

internal static class Program
{
    private const int DefaultPort = 8444;
    private const string Usage = "Usage: WssChatClient [address] [port] [--certs DIR]";

    /// <summary>
    /// Usage: WssChatClient [address] [port] [--certs DIR]. Defaults: 127.0.0.1, 8444. The
    /// server's certificate must be issued by the test CA (certs/ca.pem) for the address (or host
    /// name) given.
    /// </summary>
    private static async Task<int> Main(string[] args)
    {
        if (CommandLine.Parse(args, Usage, switches: [], options: [CertificateFolder.Option]) is not { } line)
            return 2;
        var address = line.Positional(0) ?? "127.0.0.1";
        var port = line.Positional(1) is { } portText ? int.Parse(portText, CultureInfo.InvariantCulture) : DefaultPort;

        using var certificates = CertificateFolder.Open(line.ValueOf(CertificateFolder.Option));
        if (certificates?.Load(CertificateFolder.AuthorityFile) is not { } authority)
            return 1;

        // The server is checked against the test CA and the address (TargetHost defaults to it):
        // trusting a private CA is all it takes, no "accept any certificate" switch.
        var context = new SslContext();
        context.TrustedCertificateAuthorities.Add(authority);
        Console.WriteLine($"Trusting {authority.Subject} from {certificates.Location}");

        using var terminal = new ChatTerminal();
        using var client = new ChatClient(context, address, port, terminal) { OptionNoDelay = true };
        await terminal.RunAsync(client);
        return 0;
    }
}
