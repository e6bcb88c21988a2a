using System;
using System.Globalization;
using System.Threading.Tasks;

namespace NetServer.Examples.HttpCacheClient;

internal static class Program
{
    private const int DefaultPort = 8080;
    private const string Usage = "Usage: HttpClient [address] [port] [--demo]";

    /// <summary>
    /// Usage: HttpClient [address] [port] [--demo]. Defaults: 127.0.0.1, 8080 (the HttpServer
    /// example's). Reads cache commands from the console, or runs the demo and exits.
    /// </summary>
    private static async Task<int> Main(string[] args)
    {
        if (CommandLine.Parse(args, Usage, switches: [CacheClientConsole.DemoSwitch], options: []) is not { } line)
            return 2;
        var address = line.Positional(0) ?? "127.0.0.1";
        var port = line.Positional(1) is { } portText ? int.Parse(portText, CultureInfo.InvariantCulture) : DefaultPort;

        // One connection for every request (kept alive between them), opened by the first one.
        using var client = new HttpClientEx(address, port);
        var console = new CacheClientConsole(client.Request, request => client.SendRequest(request, TimeSpan.FromSeconds(10)));
        return line.Has(CacheClientConsole.DemoSwitch) ? await console.RunDemoAsync() : await console.RunAsync();
    }
}
