using System;
using System.Threading.Tasks;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using NetServer.Hosting;

namespace NetServer.Examples.HostedServers;

/// <summary>
/// A worker service running three NetServer servers in one .NET Generic Host: TCP echo, HTTP and
/// WebSocket echo. Endpoints and limits come from appsettings.json's "NetServer" section, which
/// environment variables override (NetServer__tcp__Port=0) as do arguments (--NetServer:tcp:Port=0).
/// Every server event is logged with its event id (info: NetServer.tcp[1001] ... listening on ...).
/// Ctrl+C or SIGTERM stops the host, which closes the sessions gracefully, and the program exits 0.
/// </summary>
internal static class Program
{
    private static async Task<int> Main(string[] args)
    {
        // appsettings.json is read from the program's folder, wherever it is started from.
        var builder = Host.CreateApplicationBuilder(new HostApplicationBuilderSettings { Args = args, ContentRootPath = AppContext.BaseDirectory });
        builder.Logging.ClearProviders().AddSimpleConsole(console => console.SingleLine = true);
        builder.Services.AddNetServer("tcp", (_, options) => new EchoServer(options.CreateIPEndPoint()));
        builder.Services.AddNetServer("http", (_, options) => new HelloServer(options.CreateIPEndPoint()));
        builder.Services.AddNetServer("ws", (_, options) => new WsEchoServer(options.CreateIPEndPoint()));
        using var host = builder.Build();
        await host.RunAsync();
        return 0;
    }
}
