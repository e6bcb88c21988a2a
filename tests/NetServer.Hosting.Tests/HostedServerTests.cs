using System;
using System.Collections.Generic;
using System.IO;
using System.Net;
using System.Net.Sockets;
using System.Threading.Tasks;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Xunit;

namespace NetServer.Hosting.Tests;

public sealed class HostedServerTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(10);

    /// <summary>A host with the given configuration, a capturing logger, and the echo server "echo".</summary>
    private static IHost BuildHost(Dictionary<string, string?> settings, CapturingLoggerProvider? logs = null, LogLevel level = LogLevel.Debug)
    {
        var builder = Host.CreateApplicationBuilder(new HostApplicationBuilderSettings { DisableDefaults = true });
        builder.Configuration.AddInMemoryCollection(settings);
        builder.Logging.ClearProviders().SetMinimumLevel(level);
        if (logs is not null)
            builder.Logging.AddProvider(logs);
        builder.Services.AddSingleton<EchoCounter>();
        builder.Services.AddNetServer("echo", (services, options) => new EchoServer(services, options.CreateIPEndPoint()));
        return builder.Build();
    }

    private static async Task<Socket> Connect(EndPoint endpoint)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await socket.ConnectAsync(endpoint).WaitAsync(Timeout);
        return socket;
    }

    private static Task<int> ReceiveAsync(Socket socket, byte[] buffer) => SocketReads.FillAsync(socket, buffer, Timeout);

    [Fact]
    public async Task Host_StartsTheConfiguredServer_SessionsComeFromDI_AndStopClosesThem()
    {
        using var host = BuildHost(new() { ["NetServer:echo:Port"] = "0", ["NetServer:echo:MaxSessions"] = "7" });
        await host.StartAsync().WaitAsync(Timeout);
        var server = host.Services.GetRequiredService<EchoServer>();
        Assert.True(server.IsStarted);
        Assert.Equal(7, server.OptionMaxSessions);
        Assert.Same(server, host.Services.GetRequiredKeyedService<EchoServer>("echo"));

        using var socket = await Connect(server.Endpoint);
        await socket.SendAsync("hello"u8.ToArray(), SocketFlags.None).WaitAsync(Timeout);
        var echoed = new byte[5];
        Assert.Equal(5, await ReceiveAsync(socket, echoed));
        Assert.Equal("hello"u8.ToArray(), echoed);
        Assert.Equal(5, host.Services.GetRequiredService<EchoCounter>().Bytes); // the session got the container's singleton

        // A well-behaved peer: closes its end when the server's close arrives, which lets the graceful stop finish early.
        var closedByServer = Task.Run(async () =>
        {
            var read = await ReceiveAsync(socket, new byte[1]);
            socket.Close();
            return read;
        });
        var stopping = System.Diagnostics.Stopwatch.StartNew();
        await host.StopAsync().WaitAsync(Timeout);
        Assert.False(server.IsStarted);
        Assert.Equal(0, await closedByServer); // the server closed the connection on the way out
        Assert.True(stopping.Elapsed < TimeSpan.FromSeconds(3), $"graceful stop took {stopping.Elapsed}");
    }

    [Fact]
    public async Task InvalidOptions_FailTheStart_NamingTheKeys()
    {
        using var host = BuildHost(new()
        {
            ["NetServer:echo:Port"] = "70000",
            ["NetServer:echo:MaxSessions"] = "-1",
            ["NetServer:echo:CertificatePath"] = "/nonexistent/server.pfx",
        });
        var error = await Assert.ThrowsAsync<OptionsValidationException>(() => host.StartAsync().WaitAsync(Timeout));
        Assert.Contains("NetServer:echo:Port: 70000 is not a port", error.Message, StringComparison.Ordinal);
        Assert.Contains("NetServer:echo:MaxSessions: -1 is negative", error.Message, StringComparison.Ordinal);
        Assert.Contains("NetServer:echo:CertificatePath: file '/nonexistent/server.pfx' does not exist", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task AWrongCertificatePassword_FailsTheStart_NamingTheKey()
    {
        var pfx = Path.GetFullPath(Path.Combine(AppContext.BaseDirectory, "../../../../../certs/server.pfx"));
        Assert.True(File.Exists(pfx), pfx);
        using var host = BuildHost(new() { ["NetServer:echo:CertificatePath"] = pfx, ["NetServer:echo:CertificatePassword"] = "wrong" });
        var error = await Assert.ThrowsAsync<OptionsValidationException>(() => host.StartAsync().WaitAsync(Timeout));
        Assert.Contains($"NetServer:echo:CertificatePassword: cannot open '{pfx}'", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task APortInUse_FailsTheStart_AndStopsTheServersAlreadyStarted()
    {
        using var taken = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        taken.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        taken.Listen();
        var builder = Host.CreateApplicationBuilder(new HostApplicationBuilderSettings { DisableDefaults = true });
        builder.Configuration.AddInMemoryCollection(new Dictionary<string, string?>
        {
            ["NetServer:first:Port"] = "0",
            ["NetServer:second:Port"] = ((IPEndPoint)taken.LocalEndPoint!).Port.ToString(System.Globalization.CultureInfo.InvariantCulture),
        });
        builder.Services.AddNetServer("first", (_, options) => new TcpServer(options.CreateIPEndPoint()));
        builder.Services.AddNetServer("second", (_, options) => new HttpServer(options.CreateIPEndPoint()));
        using var host = builder.Build();
        await Assert.ThrowsAsync<SocketException>(() => host.StartAsync().WaitAsync(Timeout));
        var first = host.Services.GetRequiredKeyedService<TcpServer>("first");
        var deadline = DateTime.UtcNow + Timeout;
        while (first.IsStarted && DateTime.UtcNow < deadline)
            await Task.Delay(10);
        Assert.False(first.IsStarted);
    }

    [Fact]
    public async Task Logging_ListeningAndAClosedConnectionWithItsReason()
    {
        var logs = new CapturingLoggerProvider();
        using var host = BuildHost(new() { ["NetServer:echo:Port"] = "0" }, logs);
        await host.StartAsync().WaitAsync(Timeout);
        var server = host.Services.GetRequiredService<EchoServer>();
        var listening = await logs.WaitFor(NetServerLogEvents.Listening, Timeout);
        Assert.Equal("NetServer.echo", listening.Category);
        Assert.Contains(server.Endpoint.ToString()!, listening.Message, StringComparison.Ordinal);

        using (var socket = await Connect(server.Endpoint))
        {
            await socket.SendAsync("x"u8.ToArray(), SocketFlags.None).WaitAsync(Timeout);
            Assert.Equal(1, await ReceiveAsync(socket, new byte[1]));
            socket.Shutdown(SocketShutdown.Both);
        }

        var closed = await logs.WaitFor(NetServerLogEvents.ConnectionClosed, Timeout);
        Assert.Equal(LogLevel.Debug, closed.Level);
        Assert.Contains($"closed: {DisconnectReason.PeerClosed}", closed.Message, StringComparison.Ordinal);
        await host.StopAsync().WaitAsync(Timeout);
    }

    [Fact]
    public async Task Logging_AProtocolErrorNamesThePeer()
    {
        var logs = new CapturingLoggerProvider();
        var builder = Host.CreateApplicationBuilder(new HostApplicationBuilderSettings { DisableDefaults = true });
        builder.Configuration.AddInMemoryCollection(new Dictionary<string, string?> { ["NetServer:web:Port"] = "0" });
        builder.Logging.ClearProviders().AddProvider(logs);
        builder.Services.AddNetServer("web", (_, options) => new HttpServer(options.CreateIPEndPoint()));
        using var host = builder.Build();
        await host.StartAsync().WaitAsync(Timeout);
        var server = host.Services.GetRequiredService<HttpServer>();

        using var socket = await Connect(server.Endpoint);
        await socket.SendAsync("NOT HTTP AT ALL\r\n\r\n"u8.ToArray(), SocketFlags.None).WaitAsync(Timeout);
        var error = await logs.WaitFor(NetServerLogEvents.ProtocolError, Timeout);
        Assert.Equal(LogLevel.Warning, error.Level);
        Assert.Equal("ProtocolError", error.EventId.Name);
        Assert.Contains($"from {socket.LocalEndPoint} broke the HTTP protocol", error.Message, StringComparison.Ordinal);
        await host.StopAsync().WaitAsync(Timeout);
    }

    [Fact]
    public async Task Logging_Off_WritesNothing()
    {
        var logs = new CapturingLoggerProvider();
        using var host = BuildHost(new() { ["NetServer:echo:Port"] = "0" }, logs, LogLevel.None);
        await host.StartAsync().WaitAsync(Timeout);
        var server = host.Services.GetRequiredService<EchoServer>();
        using (var socket = await Connect(server.Endpoint))
        {
            await socket.SendAsync("x"u8.ToArray(), SocketFlags.None).WaitAsync(Timeout);
            Assert.Equal(1, await ReceiveAsync(socket, new byte[1]));
        }

        // The session's close has run once the server counts no session (the close event fires before that count drops).
        var deadline = DateTime.UtcNow + Timeout;
        while (server.ConnectedSessions > 0 && DateTime.UtcNow < deadline)
            await Task.Delay(10);
        Assert.Equal(0, server.ConnectedSessions);
        await host.StopAsync().WaitAsync(Timeout);
        Assert.DoesNotContain(logs.Records, r => r.Category.StartsWith("NetServer", StringComparison.Ordinal));
    }
}
