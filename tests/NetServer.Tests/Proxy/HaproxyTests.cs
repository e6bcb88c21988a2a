using System;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Proxy;

/// <summary>
/// A real HAProxy (TCP mode, <c>send-proxy</c> / <c>send-proxy-v2</c>) in front of NetServer: a
/// client through the proxy gets its echo, and the server's session sees the client's own address
/// and port, not the proxy's.
/// </summary>
public sealed class HaproxyTests
{
    [HaproxyTheory]
    [InlineData("send-proxy", 1)]
    [InlineData("send-proxy-v2", 2)]
    [InlineData("send-proxy-v2 proxy-v2-options crc32c", 2)]
    public async Task A_tcp_echo_server_behind_haproxy_sees_the_real_client(string options, int version)
    {
        using var server = new ProxyTcpServer(new IPEndPoint(IPAddress.Loopback, 0)) { OptionProxyProtocol = ProxyProtocolMode.Required };
        server.OptionProxyTrustedNetworks.Add("127.0.0.1/32");
        Assert.True(server.Start());
        await using var haproxy = await HaproxyProcess.StartAsync(server.Endpoint, options);

        using var client = await ProxyHeaders.ConnectAsync(haproxy.Endpoint);
        var payload = Encoding.ASCII.GetBytes("through haproxy");
        await client.SendAsync(payload, SocketFlags.None).WaitAsync(Wait.Default);
        Assert.Equal(payload, await Wait.ReadExactlyAsync(client, payload.Length));

        var seen = await server.Seen.ForRemoteAsync(client.LocalEndPoint!);
        var (remote, proxy) = await seen.First;
        Assert.Equal(client.LocalEndPoint, remote);
        Assert.Equal(version, proxy!.Version);
        Assert.Equal(haproxy.Endpoint, proxy.Destination);
    }

    [HaproxyFact]
    public async Task An_http_server_behind_haproxy_answers_with_the_real_client()
    {
        using var server = new ProxyHttpServer(new IPEndPoint(IPAddress.Loopback, 0)) { OptionProxyProtocol = ProxyProtocolMode.Required };
        server.OptionProxyTrustedNetworks.Add("127.0.0.1");
        Assert.True(server.Start());
        await using var haproxy = await HaproxyProcess.StartAsync(server.Endpoint, "send-proxy-v2");

        using var client = await ProxyHeaders.ConnectAsync(haproxy.Endpoint);
        var request = "GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
        await client.SendAsync(Encoding.ASCII.GetBytes(request), SocketFlags.None).WaitAsync(Wait.Default);
        var response = Encoding.ASCII.GetString(await ProxyHeaders.ReadToEndAsync(client));

        Assert.StartsWith("HTTP/1.1 200", response, StringComparison.Ordinal);
        Assert.EndsWith($"\r\n\r\n{client.LocalEndPoint} v2", response, StringComparison.Ordinal);
    }
}
