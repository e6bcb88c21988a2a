using System;
using System.Collections.Generic;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Threading.Tasks;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Options;
using Xunit;

namespace NetServer.Hosting.Tests;

/// <summary>The PROXY protocol keys of a hosted server's section, applied to stream and message servers and refused for UDP.</summary>
public sealed class HostedProxyTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(10);

    private static IHost Build(Dictionary<string, string?> settings, Action<IServiceCollection> register)
    {
        var builder = Host.CreateApplicationBuilder(new HostApplicationBuilderSettings { DisableDefaults = true });
        builder.Configuration.AddInMemoryCollection(settings);
        register(builder.Services);
        return builder.Build();
    }

    private static Dictionary<string, string?> Proxied(string name) => new()
    {
        [$"NetServer:{name}:Port"] = "0",
        [$"NetServer:{name}:ProxyProtocol"] = "Required",
        [$"NetServer:{name}:ProxyTrustedNetworks:0"] = "127.0.0.0/8",
        [$"NetServer:{name}:ProxyTrustedNetworks:1"] = "::1",
        [$"NetServer:{name}:ProxyHeaderTimeout"] = "00:00:03",
    };

    private sealed class PeerSession(TcpServer server, TaskCompletionSource<EndPoint?> seen) : TcpSession(server)
    {
        protected override void OnConnected() => seen.TrySetResult(RemoteEndPoint);

        protected override void OnReceived(ReadOnlySpan<byte> buffer) => SendAsync(buffer);
    }

    private sealed class PeerServer(IPEndPoint endpoint) : TcpServer(endpoint)
    {
        public TaskCompletionSource<EndPoint?> Seen { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        protected override TcpSession CreateSession() => new PeerSession(this, Seen);
    }

    private sealed class Messages(IPEndPoint endpoint) : MessageServer(endpoint);

    private sealed class Datagrams(IPEndPoint endpoint) : UdpServer(endpoint);

    [Fact]
    public async Task A_stream_server_gets_the_proxy_keys_and_its_session_sees_the_real_client()
    {
        using var host = Build(Proxied("tcp"), services => services.AddNetServer("tcp", (_, options) => new PeerServer(options.CreateIPEndPoint())));
        await host.StartAsync().WaitAsync(Timeout);
        var server = host.Services.GetRequiredService<PeerServer>();
        Assert.Equal(ProxyProtocolMode.Required, server.OptionProxyProtocol);
        Assert.Equal(new[] { "127.0.0.0/8", "::1" }, server.OptionProxyTrustedNetworks);
        Assert.Equal(TimeSpan.FromSeconds(3), server.OptionProxyHeaderTimeout);

        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await socket.ConnectAsync(server.Endpoint).WaitAsync(Timeout);
        await socket.SendAsync(Encoding.ASCII.GetBytes("PROXY TCP4 192.0.2.10 10.1.1.1 40000 443\r\nhi"), SocketFlags.None).WaitAsync(Timeout);
        Assert.Equal(new IPEndPoint(IPAddress.Parse("192.0.2.10"), 40000), await server.Seen.Task.WaitAsync(Timeout));
        var echoed = new byte[2];
        Assert.Equal(2, await SocketReads.FillAsync(socket, echoed, Timeout));
        Assert.Equal("hi", Encoding.ASCII.GetString(echoed));
        await host.StopAsync().WaitAsync(Timeout);
    }

    [Fact]
    public async Task A_message_server_gets_the_proxy_keys()
    {
        using var host = Build(Proxied("msg"), services => services.AddNetServer("msg", (_, options) => new Messages(options.CreateIPEndPoint())));
        await host.StartAsync().WaitAsync(Timeout);
        var server = host.Services.GetRequiredService<Messages>();
        Assert.Equal(ProxyProtocolMode.Required, server.OptionProxyProtocol);
        Assert.Equal(new[] { "127.0.0.0/8", "::1" }, server.OptionProxyTrustedNetworks);
        Assert.Equal(TimeSpan.FromSeconds(3), server.OptionProxyHeaderTimeout);
        await host.StopAsync().WaitAsync(Timeout);
    }

    [Fact]
    public async Task A_udp_server_with_proxy_keys_fails_the_start()
    {
        using var host = Build(Proxied("udp"), services => services.AddNetServer("udp", (_, options) => new Datagrams(options.CreateIPEndPoint())));
        var refused = await Assert.ThrowsAsync<InvalidOperationException>(() => host.StartAsync().WaitAsync(Timeout));
        Assert.Contains("the PROXY protocol keys (NetServer:udp:ProxyProtocol", refused.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_bad_header_timeout_fails_validation_naming_the_key()
    {
        var settings = Proxied("tcp");
        settings["NetServer:tcp:ProxyHeaderTimeout"] = "-00:00:01";
        using var host = Build(settings, services => services.AddNetServer("tcp", (_, options) => new PeerServer(options.CreateIPEndPoint())));
        var refused = await Assert.ThrowsAsync<OptionsValidationException>(() => host.StartAsync().WaitAsync(Timeout));
        Assert.Contains("NetServer:tcp:ProxyHeaderTimeout", refused.Message, StringComparison.Ordinal);
    }
}
