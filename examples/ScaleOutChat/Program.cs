using System;
using System.Globalization;
using System.Net;
using System.Runtime.InteropServices;
using System.Threading.Tasks;
using NetServer.Redis;

namespace NetServer.Examples.ScaleOutChat;

internal static class Program
{
    private const string Usage = "Usage: ScaleOutChat [port] [--node NAME] [--redis HOST:PORT] [--proxy-trust NETWORK] [--presence-ttl SECONDS] [--address ADDRESS]";
    private static readonly string[] s_options = ["--node", "--redis", "--proxy-trust", "--presence-ttl", "--address"];

    /// <summary>
    /// One node of the chat. Each setting comes from its argument, else from an environment variable
    /// (SCALEOUT_PORT, SCALEOUT_NODE, SCALEOUT_REDIS, SCALEOUT_PROXY_TRUST, SCALEOUT_PRESENCE_TTL,
    /// SCALEOUT_ADDRESS), else a default: port 8090 (0 picks a free one), node "HOST-PID", Redis
    /// 127.0.0.1:6379, no PROXY header, presence 10 s, address 127.0.0.1. With a trusted network
    /// (an address or CIDR: the load balancers) every connection must come from it with a PROXY
    /// header. Runs until Ctrl+C or SIGTERM.
    /// </summary>
    private static async Task<int> Main(string[] args)
    {
        if (CommandLine.Parse(args, Usage, switches: [], options: s_options) is not { } line)
            return 2;
        static string? Variable(string name) => Environment.GetEnvironmentVariable(name) is { Length: > 0 } value ? value : null;
        string? Setting(string option, string variable) => line.ValueOf(option) ?? Variable(variable);

        var port = int.Parse(line.Positional(0) ?? Variable("SCALEOUT_PORT") ?? "8090", CultureInfo.InvariantCulture);
        var name = Setting("--node", "SCALEOUT_NODE") ?? $"{Environment.MachineName}-{Environment.ProcessId}";
        var redis = Setting("--redis", "SCALEOUT_REDIS") ?? "127.0.0.1:6379";
        var trusted = Setting("--proxy-trust", "SCALEOUT_PROXY_TRUST");
        var address = IPAddress.Parse(Setting("--address", "SCALEOUT_ADDRESS") ?? "127.0.0.1");
        var options = new BackplaneOptions();
        if (Setting("--presence-ttl", "SCALEOUT_PRESENCE_TTL") is { } ttl)
        {
            // Renewed three times per expiry, as the defaults (10 s, 3 s) are.
            options.PresenceTtl = TimeSpan.FromSeconds(double.Parse(ttl, CultureInfo.InvariantCulture));
            options.PresenceRefresh = options.PresenceTtl / 3;
        }

        using var node = new ChatNode(address, port, name, options) { OptionNoDelay = true };
        if (trusted is not null)
        {
            node.OptionProxyProtocol = ProxyProtocolMode.Required;
            foreach (var network in trusted.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
                node.OptionProxyTrustedNetworks.Add(network);
        }

        var stop = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        void OnSignal(PosixSignalContext context)
        {
            context.Cancel = true;
            stop.TrySetResult();
        }
        using var interrupt = PosixSignalRegistration.Create(PosixSignal.SIGINT, OnSignal);
        using var terminate = PosixSignalRegistration.Create(PosixSignal.SIGTERM, OnSignal);

        await node.Backplane.StartAsync(redis);
        Console.WriteLine($"Node {name} is backplane node {node.Backplane.NodeId} on Redis {redis} ({(node.Backplane.IsConnected ? "connected" : "not reachable yet")})");
        if (!node.Start())
        {
            Console.WriteLine($"Cannot listen on {address}:{port}");
            await node.Backplane.DisposeAsync();
            return 1;
        }

        Console.WriteLine($"Listening on {node.Endpoint}{(trusted is null ? "" : $" (PROXY header required from {trusted})")}");
        Console.WriteLine("Ctrl+C or SIGTERM stops the node.");
        await stop.Task;

        // The members leave their rooms on every node: the backplane takes them out of Redis, then the sessions close.
        node.CloseAll(WsCloseStatus.GoingAway, "The node is stopping");
        node.DisconnectAll();
        await node.StopAsync();
        await node.Backplane.DisposeAsync();
        Console.WriteLine($"Node {name} stopped");
        return 0;
    }
}
