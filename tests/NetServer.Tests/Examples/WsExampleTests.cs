using System;
using System.Globalization;
using System.IO;
using System.Net;
using System.Net.WebSockets;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Examples;

/// <summary>
/// The WebSocket chat examples as a user runs them: WsChatServer and WssChatServer as child
/// processes on a free port, their console clients (also child processes) chatting through them,
/// the servers' HTTP side driven by the test's own clients, and the chat page (www/ws) in headless
/// Chromium, typed into like a user would, next to a WsClient of the test.
/// </summary>
[Collection(nameof(HostNetworkCollection))]
public sealed class WsExampleTests
{
    private static readonly TimeSpan s_timeout = TimeSpan.FromSeconds(10);

    [Theory]
    [InlineData("Ws")]
    [InlineData("Wss")]
    public async Task Chat_clients_see_each_others_lines_and_the_admins_leave_and_come_back_after_a_restart(string flavor)
    {
        await using var server = ProgramProcess.Start(flavor + "ChatServer", "0", IPAddress.Loopback.ToString());
        var pageLine = await server.WaitForLineAsync("Chat page: ");
        var port = (await server.ListeningPortAsync()).ToString(CultureInfo.InvariantCulture);
        Assert.Equal($"Chat page: {(flavor == "Wss" ? "https" : "http")}://127.0.0.1:{port}/chat/index.html", pageLine);

        // Found without --certs: the TLS programs look for the repository's certs/ folder themselves.
        await using var alice = ProgramProcess.Start(flavor + "ChatClient", "127.0.0.1", port);
        await JoinedAsync(alice, flavor);
        await using var bob = ProgramProcess.Start(flavor + "ChatClient", "127.0.0.1", port);
        await JoinedAsync(bob, flavor);

        await alice.TypeAsync("hello from alice");
        await bob.WaitForLineAsync("hello from alice");
        await alice.WaitForLineAsync("hello from alice"); // everyone, the sender included
        await bob.TypeAsync("héllo to you, alice ✓");
        await alice.WaitForLineAsync("héllo to you, alice ✓");

        await server.TypeAsync("maintenance at noon");
        await alice.WaitForLineAsync("(admin) maintenance at noon");
        await bob.WaitForLineAsync("(admin) maintenance at noon");

        // "!" at a client closes its WebSocket (the server answers 1000) and the client comes back.
        await alice.TypeAsync("!");
        await alice.WaitForLineAsync("Closed: 1000");
        await alice.WaitForLineAsync("Disconnected");
        await JoinedAsync(alice, flavor);

        // "!" at the server restarts it: each member is told 1001 (going away) and reconnects on its own.
        await server.TypeAsync("!");
        await alice.WaitForLineAsync("Closed: 1001 The chat server is going away");
        await bob.WaitForLineAsync("Closed: 1001 The chat server is going away");
        Assert.Equal($"Listening on 127.0.0.1:{port}", await server.WaitForLineAsync("Listening on "));
        await JoinedAsync(alice, flavor);
        await JoinedAsync(bob, flavor);
        await bob.TypeAsync("after the restart");
        await alice.WaitForLineAsync("after the restart");

        // An empty line quits a client (closing its WebSocket first) and stops the server.
        await alice.TypeAsync(string.Empty);
        await bob.TypeAsync(string.Empty);
        Assert.Equal(0, await alice.WaitForExitAsync());
        Assert.Equal(0, await bob.WaitForExitAsync());
        Assert.Contains("Closed: 1000", alice.Transcript.Split("after the restart")[1], StringComparison.Ordinal);
        await server.TypeAsync(string.Empty);
        Assert.Equal(0, await server.WaitForExitAsync());

        // The server's log: members joining, their messages, their leaving with the reason.
        Assert.Matches(@"Session [0-9a-f-]+ joined from 127\.0\.0\.1:\d+", server.Transcript);
        Assert.Matches("Session [0-9a-f-]+: hello from alice", server.Transcript);
        Assert.Matches(@"Session [0-9a-f-]+ left \(\w+\)", server.Transcript);
        Assert.DoesNotContain("error", server.Transcript, StringComparison.OrdinalIgnoreCase);
    }

    [Fact]
    public async Task WsChatServer_answers_plain_http_refuses_pages_of_other_sites_and_binary_messages()
    {
        await using var server = ProgramProcess.Start("WsChatServer", "0", IPAddress.Loopback.ToString());
        var port = await server.ListeningPortAsync();

        // The page, and where the other paths lead.
        using (var http = new HttpClientEx(IPAddress.Loopback, port))
        {
            var page = await http.SendGetRequest("/chat/index.html", s_timeout);
            Assert.Equal(200, page.Status);
            Assert.Contains("new WebSocket(url)", page.Body, StringComparison.Ordinal);
            var root = await http.SendGetRequest("/", s_timeout);
            Assert.Equal(302, root.Status);
            Assert.True(root.TryGetHeader("Location", out var location));
            Assert.Equal("/chat/index.html", location);
            var elsewhere = await http.SendGetRequest("/elsewhere", s_timeout);
            Assert.Equal(404, elsewhere.Status);
        }

        await server.WaitForLinesAsync("GET /chat/index.html -> static", "GET / -> 302", "GET /elsewhere -> 404");

        // A browser names the page it runs: this server's own page joins, another site's does not.
        using (var foreign = new ChatPeer(IPAddress.Loopback, port) { Origin = "http://evil.example" })
        {
            var refused = await Assert.ThrowsAsync<WebSocketException>(() => foreign.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout));
            Assert.Contains("403", refused.Message, StringComparison.Ordinal);
        }

        Assert.Contains("a page from http://evil.example is not this server's", await server.WaitForLineAsync("Session "), StringComparison.Ordinal);
        using (var own = new ChatPeer(IPAddress.Loopback, port) { Origin = $"http://127.0.0.1:{port}" })
        {
            Assert.True(await own.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout));
            await ExpectMessageAsync(own, "Welcome to the NetServer chat.");

            // The chat is text: a binary message closes the sender with 1003 (unsupported data).
            Assert.True(await own.SendMessageAsync(new byte[] { 1, 2, 3 }).AsTask().WaitAsync(s_timeout));
            Assert.Equal(WsCloseStatus.UnsupportedData, await own.CloseStatus.Task.WaitAsync(s_timeout));
        }

        await server.TypeAsync(string.Empty);
        Assert.Equal(0, await server.WaitForExitAsync());
    }

    [ChromiumFact]
    public Task Chat_page_over_ws_connects_sends_on_Enter_and_shows_what_everyone_sends() => ChatPageAsync("Ws");

    [ChromiumFact]
    public Task Chat_page_over_wss_connects_sends_on_Enter_and_shows_what_everyone_sends() => ChatPageAsync("Wss");

    /// <summary>
    /// The page in Chromium, served by the server example: it connects to the server it came from
    /// (ws:// or wss:// after the page's own scheme), a line typed and sent with Enter comes back
    /// into the page, and the page shows what a WsClient of the test and the operator send; the
    /// test's client gets what the page sends. After a server restart the page reconnects by itself.
    /// </summary>
    private static async Task ChatPageAsync(string flavor)
    {
        var secure = flavor == "Wss";
        await using var server = ProgramProcess.Start(flavor + "ChatServer", "0", IPAddress.Loopback.ToString());
        var port = await server.ListeningPortAsync();
        var page = new Uri($"{(secure ? "https" : "http")}://127.0.0.1:{port}/chat/index.html");

        // Over TLS the browser is told to accept the test server's key (and only it): it does not trust the test CA.
        string[] arguments = secure ? ["--ignore-certificate-errors-spki-list=" + ServerKeyPin()] : [];
        await using var browser = await BrowserPage.OpenAsync(page, TimeSpan.FromSeconds(20), arguments);
        await browser.WaitUntilAsync("document.getElementById('status').dataset.state === 'open'", "the connection open");
        Assert.Equal($"Connected to {(secure ? "wss" : "ws")}://127.0.0.1:{port}/", (await browser.EvaluateAsync("document.getElementById('status').textContent"))?.GetValue<string>());
        await browser.WaitUntilAsync(Shown("Welcome to the NetServer chat.", prefix: true), "the greeting");

        await browser.TypeAsync("#message", "hello from the browser");
        await browser.PressEnterAsync();
        await browser.WaitUntilAsync(Shown("hello from the browser"), "its own message back from the server");
        Assert.Equal(string.Empty, (await browser.EvaluateAsync("document.getElementById('message').value"))?.GetValue<string>());

        // A program joins: what it sends appears on the page, what the page sends reaches it.
        using var certificates = secure ? Authority() : null;
        using var peer = secure ? (IWsPeer)new SecureChatPeer(certificates!, port) : new ChatPeer(IPAddress.Loopback, port);
        Assert.True(await peer.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout));
        await ExpectMessageAsync(peer, "Welcome to the NetServer chat.");
        Assert.True(await peer.SendMessageAsync("hello from C# <b>not bold</b>").AsTask().WaitAsync(s_timeout));
        await browser.WaitUntilAsync(Shown("hello from C# <b>not bold</b>"), "the program's message as text");
        Assert.Equal(0, (await browser.EvaluateAsync("document.querySelectorAll('#messages b').length"))?.GetValue<int>());
        await browser.TypeAsync("#message", "hello back");
        await browser.PressEnterAsync();
        await ExpectMessageAsync(peer, "hello back");

        await server.TypeAsync("maintenance at noon");
        await browser.WaitUntilAsync(Shown("(admin) maintenance at noon"), "the operator's message");
        await server.WaitForLinesAsync("GET /chat/index.html -> static");

        // The server restarts (closing every member with 1001): the page connects again and is greeted again.
        await server.TypeAsync("!");
        await browser.WaitUntilAsync(
            "document.getElementById('status').dataset.state === 'open' && " +
            "[...document.querySelectorAll('#messages .text')].filter(e => e.textContent.startsWith('Welcome to the NetServer chat.')).length === 2",
            "the page reconnected after the restart");

        await server.TypeAsync(string.Empty);
        Assert.Equal(0, await server.WaitForExitAsync());
        await browser.WaitUntilAsync("document.getElementById('status').dataset.state !== 'open'", "the connection lost once the server stopped");
    }

    /// <summary>A JavaScript condition: a message with this text (or starting with it) is on the page.</summary>
    private static string Shown(string text, bool prefix = false) =>
        $"[...document.querySelectorAll('#messages .text')].some(e => e.textContent{(prefix ? ".startsWith(" + Js(text) + ")" : " === " + Js(text))})";

    private static string Js(string text) => System.Text.Json.JsonSerializer.Serialize(text);

    /// <summary>Reads messages until one starts with <paramref name="text"/> (earlier ones are skipped); fails after the timeout.</summary>
    private static async Task ExpectMessageAsync(IWsPeer peer, string text)
    {
        using var timeout = new CancellationTokenSource(s_timeout);
        try
        {
            while (true)
            {
                using var message = await peer.ReceiveMessageAsync(timeout.Token);
                if (message.IsText && message.Text.StartsWith(text, StringComparison.Ordinal))
                    return;
            }
        }
        catch (OperationCanceledException)
        {
            Assert.Fail($"No message \"{text}\" within {s_timeout.TotalSeconds} s.");
        }
    }

    /// <summary>A console client joined: connected (over TLS, to the test certificate's server), then greeted.</summary>
    private static async Task JoinedAsync(ProgramProcess client, string flavor)
    {
        if (flavor == "Wss")
            Assert.Contains("server certificate CN=localhost", await client.WaitForLineAsync("Secured: "), StringComparison.Ordinal);
        await client.WaitForLineAsync("Connected to ");
        await client.WaitForLineAsync("Welcome to the NetServer chat.");
    }

    private static X509Certificate2 Authority() => X509CertificateLoader.LoadCertificateFromFile(Path.Combine(ProgramProcess.RepositoryCertificates(), "ca.pem"));

    /// <summary>The base64 SHA-256 of the server certificate's public key (its SubjectPublicKeyInfo), as Chromium's SPKI list takes it.</summary>
    private static string ServerKeyPin()
    {
        using var certificate = X509CertificateLoader.LoadCertificateFromFile(Path.Combine(ProgramProcess.RepositoryCertificates(), "server.pem"));
        return Convert.ToBase64String(SHA256.HashData(certificate.PublicKey.ExportSubjectPublicKeyInfo()));
    }

    /// <summary>What the page test needs of a test client, over TCP or TLS.</summary>
    private interface IWsPeer : IDisposable
    {
        Task<bool> ConnectAsync(CancellationToken cancellationToken);

        ValueTask<bool> SendMessageAsync(string text, CancellationToken cancellationToken = default);

        ValueTask<ReceivedMessage> ReceiveMessageAsync(CancellationToken cancellationToken = default);
    }

    /// <summary>A chat member of the test's own: awaits messages, may name an Origin as a browser would, and records the server's close status.</summary>
    private sealed class ChatPeer(IPAddress address, int port) : WsClient(address, port), IWsPeer
    {
        public string? Origin { get; init; }

        public TaskCompletionSource<int> CloseStatus { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public override void OnWsConnecting(HttpRequest request)
        {
            if (Origin is not null)
                request.SetBegin("GET", "/").SetHeader("Origin", Origin);
        }

        public override void OnWsClose(byte[] buffer, long offset, long size, int status) => CloseStatus.TrySetResult(status);
    }

    /// <summary>The same over TLS, trusting the test CA.</summary>
    private sealed class SecureChatPeer : WssClient, IWsPeer
    {
        public SecureChatPeer(X509Certificate2 authority, int port)
            : base(Trusting(authority), IPAddress.Loopback, port)
        {
        }

        private static SslContext Trusting(X509Certificate2 authority)
        {
            var context = new SslContext();
            context.TrustedCertificateAuthorities.Add(authority);
            return context;
        }
    }
}
