using System;
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Security.Authentication;
using System.Threading.Tasks;

namespace NetServer.Examples.SslChatServer;

/// <summary>One chat member connected over TLS.</summary>
internal sealed class ChatSession(ChatServer server) : SslSession(server)
{
    private readonly LineReader _lines = new();

    protected override void OnReceived(ReadOnlySpan<byte> buffer) => ChatRoom.Relay(Server, this, _lines, buffer);

    protected override void OnError(SocketError error) => Console.WriteLine($"Session {Id} caught a socket error: {error}");
}

/// <summary>The chat room on a TCP port behind TLS: a connection becomes a member once its handshake succeeds.</summary>
internal sealed class ChatServer(SslContext context, IPAddress address, int port) : SslServer(context, address, port)
{
    protected override SslSession CreateSession() => new ChatSession(this);

    // Greeted after the handshake, not on connect: a peer that fails it never joins (multicasts skip it too).
    protected override void OnHandshaked(SslSession session)
    {
        Console.WriteLine($"Secured session {session.Id}: {TlsReport.Describe(session.Tls!, "client")}");
        ChatRoom.Welcome(session, session.Socket?.RemoteEndPoint?.ToString());
    }

    protected override void OnHandshakeFailed(SslSession session, Exception exception)
    {
        var expected = Context.ClientCertificateMode == SslClientCertificateMode.Required ? "a client certificate issued by a trusted CA" : null;
        Console.WriteLine($"Handshake failed for session {session.Id}: {TlsReport.DescribeFailure(exception, expected)}");
    }

    protected override void OnDisconnected(SslSession session) => ChatRoom.Farewell(session);

    protected override void OnError(SocketError error) => Console.WriteLine($"The server caught a socket error: {error}");
}

internal static class Program
{
    private const int DefaultPort = 2222;
    private const string RequireClientCertificate = "--require-client-cert";
    private const string Usage = "Usage: SslChatServer [port] [address] [--require-client-cert] [--certs DIR]";

    /// <summary>
    /// Usage: SslChatServer [port] [address] [--require-client-cert] [--certs DIR]. Port 0 lets the
    /// system pick a free port; the address defaults to 127.0.0.1. The certificates come from the
    /// repository's certs/ folder unless --certs names another.
    /// </summary>
    private static async Task<int> Main(string[] args)
    {
        if (CommandLine.Parse(args, Usage, switches: [RequireClientCertificate], options: [CertificateFolder.Option]) is not { } line)
            return 2;
        var port = line.Positional(0) is { } portText ? int.Parse(portText, CultureInfo.InvariantCulture) : DefaultPort;
        var address = line.Positional(1) is { } addressText ? IPAddress.Parse(addressText) : IPAddress.Loopback;

        using var certificates = CertificateFolder.Open(line.ValueOf(CertificateFolder.Option));
        if (certificates?.Load(CertificateFolder.ServerFile) is not { } certificate
            || certificates.Load(CertificateFolder.AuthorityFile) is not { } authority)
            return 1;

        // Protocols None: TLS 1.2 and 1.3 (SslContext asks for no other), with AEAD cipher suites
        // only (SslContext.CipherSuitesPolicy null: its default). The CA vouches for client
        // certificates, which the server asks for only when told to require them.
        var context = new SslContext(SslProtocols.None, certificate)
        {
            ClientCertificateMode = line.Has(RequireClientCertificate) ? SslClientCertificateMode.Required : SslClientCertificateMode.None,
        };
        context.TrustedCertificateAuthorities.Add(authority);
        Console.WriteLine($"Certificate {certificate.Subject} from {certificates.Location}; client certificates: {context.ClientCertificateMode}");

        // As in the TCP chat: no delay for small lines, reuse address for a quick restart.
        using var server = new ChatServer(context, address, port) { OptionNoDelay = true, OptionReuseAddress = true };
        return await ChatRoom.RunConsoleAsync(server, "TLS chat server");
    }
}
