using System;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Proxy;

/// <summary>
/// The PROXY protocol in the engine, driven by raw sockets that write headers by hand: the session
/// sees the real client from its first hook, no application byte after the header is lost, TLS
/// starts after the header, and untrusted, malformed or late headers close the connection with a reason.
/// </summary>
public sealed class ProxyProtocolTests
{
    private static readonly IPEndPoint s_client = new(IPAddress.Parse("203.0.113.7"), 4242);
    private static readonly IPEndPoint s_front = new(IPAddress.Parse("198.51.100.1"), 443);

    private static ProxyTcpServer StartTcp(ProxyProtocolMode mode, string trusted = "127.0.0.0/8", ProtocolErrors? listener = null, TimeSpan? timeout = null)
    {
        var server = new ProxyTcpServer(new IPEndPoint(IPAddress.Loopback, 0)) { OptionProxyProtocol = mode, EventListener = listener };
        server.OptionProxyTrustedNetworks.Add(trusted);
        if (timeout is { } t)
            server.OptionProxyHeaderTimeout = t;
        Assert.True(server.Start());
        return server;
    }

    private static async Task<string> EchoAsync(Socket socket, byte[] prefix, string text)
    {
        var payload = Encoding.ASCII.GetBytes(text);
        await socket.SendAsync(prefix.Concat(payload).ToArray(), SocketFlags.None).WaitAsync(Wait.Default);
        return Encoding.ASCII.GetString(await Wait.ReadExactlyAsync(socket, payload.Length));
    }

    [Fact]
    public async Task V1_header_and_payload_in_one_write_the_session_sees_the_real_client_from_its_first_hook()
    {
        using var server = StartTcp(ProxyProtocolMode.Required);
        using var socket = await ProxyHeaders.ConnectAsync(server.Endpoint);

        // The payload rides in the same segment as the header: the reader must not swallow it.
        Assert.Equal("hello", await EchoAsync(socket, ProxyHeaders.V1("203.0.113.7", 4242, "198.51.100.1", 443), "hello"));
        var seen = await server.Seen.TakeAsync();
        var (remote, proxy) = await seen.First;
        Assert.Equal(s_client, remote);
        Assert.Equal(1, proxy!.Version);
        Assert.Equal(s_front, proxy.Destination);
    }

    [Fact]
    public async Task V2_header_with_alpn_and_authority_tlvs()
    {
        using var server = StartTcp(ProxyProtocolMode.Required);
        using var socket = await ProxyHeaders.ConnectAsync(server.Endpoint);
        var header = ProxyHeaders.V2(s_client, s_front, (ProxyInfo.TlvAlpn, "h2"), (ProxyInfo.TlvAuthority, "example.com"));

        Assert.Equal("ping", await EchoAsync(socket, header, "ping"));
        var (remote, proxy) = await (await server.Seen.TakeAsync()).First;
        Assert.Equal(s_client, remote);
        Assert.Equal(2, proxy!.Version);
        Assert.Equal("h2", proxy.Alpn);
        Assert.Equal("example.com", proxy.Authority);
        Assert.Equal(1, server.ConnectedSessions);
    }

    [Fact]
    public async Task A_header_split_over_many_small_writes()
    {
        using var server = StartTcp(ProxyProtocolMode.Required);
        using var socket = await ProxyHeaders.ConnectAsync(server.Endpoint);
        var header = ProxyHeaders.V2(s_client, s_front, (ProxyInfo.TlvAuthority, "split.example"));
        var chunks = header.Chunk(3).ToArray();
        foreach (var chunk in chunks[..^1])
        {
            await socket.SendAsync(chunk, SocketFlags.None).WaitAsync(Wait.Default);
            await Task.Delay(2); // separate segments, so the server sees the header in pieces
        }

        var seen = await server.Seen.TakeAsync();
        await Task.Delay(50);
        Assert.False(seen.Connected, "OnConnected ran before the header was whole.");
        Assert.False(seen.First.IsCompleted, "OnConnecting ran before the header was whole.");
        await socket.SendAsync(chunks[^1], SocketFlags.None).WaitAsync(Wait.Default);
        Assert.Equal("after", await EchoAsync(socket, Array.Empty<byte>(), "after"));
        var (remote, proxy) = await seen.First;
        Assert.Equal(s_client, remote);
        Assert.Equal("split.example", proxy!.Authority);
    }

    [Fact]
    public async Task A_websocket_upgrade_after_the_header()
    {
        using var server = new ProxyWsServer(new IPEndPoint(IPAddress.Loopback, 0)) { OptionProxyProtocol = ProxyProtocolMode.Required };
        server.OptionProxyTrustedNetworks.Add("127.0.0.1");
        Assert.True(server.Start());
        using var socket = await ProxyHeaders.ConnectAsync(server.Endpoint);
        var upgrade = "GET /ws HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";
        await socket.SendAsync(ProxyHeaders.V2(s_client, s_front).Concat(Encoding.ASCII.GetBytes(upgrade)).ToArray(), SocketFlags.None).WaitAsync(Wait.Default);

        var head = Encoding.ASCII.GetString(await Wait.ReadExactlyAsync(socket, "HTTP/1.1 101".Length));
        Assert.Equal("HTTP/1.1 101", head);
        var seen = await server.Seen.TakeAsync();
        Assert.Equal(s_client, (await seen.First).Remote);
        await Wait.UntilAsync(() => seen.Connected, "OnWsConnected");
    }

    [Fact]
    public async Task A_unix_socket_server_trusts_its_local_peers()
    {
        var path = Path.Combine(Path.GetTempPath(), "netserver-proxy-" + Guid.NewGuid().ToString("N")[..12] + ".sock");
        using var server = new ProxyUdsServer(path) { OptionProxyProtocol = ProxyProtocolMode.Required };
        Assert.True(server.Start());
        using var socket = await ProxyHeaders.ConnectAsync(server.Endpoint);

        Assert.Equal("uds", await EchoAsync(socket, ProxyHeaders.V1("203.0.113.7", 4242, "198.51.100.1", 443), "uds"));
        Assert.Equal(s_client, (await (await server.Seen.TakeAsync()).First).Remote);
    }

    [Fact]
    public async Task An_untrusted_source_is_refused_before_any_hook_with_a_reason()
    {
        var listener = new ProtocolErrors();
        using var server = StartTcp(ProxyProtocolMode.Required, trusted: "10.0.0.0/8", listener: listener);
        using var socket = await ProxyHeaders.ConnectAsync(server.Endpoint);
        await socket.SendAsync(ProxyHeaders.V1("203.0.113.7", 4242, "198.51.100.1", 443), SocketFlags.None).WaitAsync(Wait.Default);

        Assert.Empty(await ProxyHeaders.ReadToEndAsync(socket));
        var seen = await server.Seen.TakeAsync();
        var (reason, exception) = await seen.Ended;
        Assert.Equal(DisconnectReason.ProtocolError, reason);
        Assert.Contains("127.0.0.1 is not a trusted proxy", exception!.Message, StringComparison.Ordinal);
        Assert.False(seen.Connected);
        Assert.False(seen.First.IsCompleted, "a refused session ran OnConnecting");
        var (protocol, error, _) = Assert.Single(listener.Events);
        Assert.Equal("PROXY", protocol);
        Assert.Contains("not a trusted proxy", error, StringComparison.Ordinal);
        Assert.Equal(0, server.ConnectedSessions);
    }

    [Fact]
    public async Task Optional_mode_serves_an_untrusted_client_directly_and_reads_no_header_from_it()
    {
        using var server = StartTcp(ProxyProtocolMode.Optional, trusted: "10.0.0.0/8");
        using var socket = await ProxyHeaders.ConnectAsync(server.Endpoint);

        // A direct client cannot pose as another: what it sends is its own data, echoed whole.
        var sent = ProxyHeaders.V1("203.0.113.7", 4242, "198.51.100.1", 443).Concat(Encoding.ASCII.GetBytes("x")).ToArray();
        await socket.SendAsync(sent, SocketFlags.None).WaitAsync(Wait.Default);
        Assert.Equal(sent, await Wait.ReadExactlyAsync(socket, sent.Length));
        var (remote, proxy) = await (await server.Seen.TakeAsync()).First;
        Assert.Equal(socket.LocalEndPoint, remote);
        Assert.Null(proxy);
    }

    [Theory]
    [InlineData("PROXY TCP4 203.0.113.7 nonsense 1 2\r\n", "bad TCP4 address")]
    [InlineData("GET / HTTP/1.1\r\n\r\n", "does not start with a PROXY v1 or v2 signature")]
    public async Task A_malformed_header_is_refused_with_a_reason(string sent, string expected)
    {
        var listener = new ProtocolErrors();
        using var server = StartTcp(ProxyProtocolMode.Required, listener: listener);
        using var socket = await ProxyHeaders.ConnectAsync(server.Endpoint);
        await socket.SendAsync(Encoding.ASCII.GetBytes(sent), SocketFlags.None).WaitAsync(Wait.Default);

        Assert.Empty(await ProxyHeaders.ReadToEndAsync(socket));
        var seen = await server.Seen.TakeAsync();
        var (reason, exception) = await seen.Ended;
        Assert.Equal(DisconnectReason.ProtocolError, reason);
        Assert.IsType<ProtocolViolationException>(exception);
        Assert.Contains(expected, exception!.Message, StringComparison.Ordinal);
        Assert.False(seen.Connected);
        Assert.Contains(listener.Events, e => e.Protocol == "PROXY" && e.Error.Contains(expected, StringComparison.Ordinal));
    }

    [Fact]
    public async Task A_peer_that_never_finishes_its_header_is_closed_at_the_timeout()
    {
        using var server = StartTcp(ProxyProtocolMode.Required, timeout: TimeSpan.FromMilliseconds(300));
        using var socket = await ProxyHeaders.ConnectAsync(server.Endpoint);
        await socket.SendAsync(Encoding.ASCII.GetBytes("PROXY TCP4 1.2"), SocketFlags.None).WaitAsync(Wait.Default);
        var clock = Stopwatch.StartNew();

        Assert.Empty(await ProxyHeaders.ReadToEndAsync(socket));
        var (reason, exception) = await (await server.Seen.TakeAsync()).Ended;
        Assert.Equal(DisconnectReason.TimedOut, reason);
        Assert.IsType<TimeoutException>(exception);
        Assert.InRange(clock.Elapsed, TimeSpan.FromMilliseconds(150), TimeSpan.FromSeconds(5));
    }

    [Fact]
    public async Task Stop_does_not_wait_for_a_pending_header()
    {
        var server = StartTcp(ProxyProtocolMode.Required, timeout: TimeSpan.FromSeconds(60));
        using var socket = await ProxyHeaders.ConnectAsync(server.Endpoint);
        var seen = await server.Seen.TakeAsync();
        var clock = Stopwatch.StartNew();

        Assert.True(await server.StopAsync().WaitAsync(Wait.Default));
        Assert.True(clock.Elapsed < TimeSpan.FromSeconds(10), $"Stop took {clock.Elapsed}");
        Assert.Equal(DisconnectReason.ServerStopped, (await seen.Ended).Reason);
        server.Dispose();
    }

    [Fact]
    public void Start_checks_the_trusted_networks()
    {
        using var none = new ProxyTcpServer(new IPEndPoint(IPAddress.Loopback, 0)) { OptionProxyProtocol = ProxyProtocolMode.Required };
        Assert.Throws<InvalidOperationException>(() => none.Start());
        Assert.False(none.IsStarted);

        using var bad = new ProxyTcpServer(new IPEndPoint(IPAddress.Loopback, 0)) { OptionProxyProtocol = ProxyProtocolMode.Required };
        bad.OptionProxyTrustedNetworks.Add("10.0.0.0/33");
        Assert.Throws<FormatException>(() => bad.Start());
    }
}
