using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Net.Sockets;
using System.Net.WebSockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace NetServer.Benchmark.ScaleOut;

/// <summary>
/// Load for examples/ScaleOutChat nodes: clients spread round-robin over the nodes' ports, all in the
/// lobby; some of them send at a fixed total rate, every client times each message it receives from
/// the sender's timestamp (one machine: Stopwatch is one monotonic clock for all processes). Reports
/// messages sent, deliveries per second, latency quantiles, and Redis PUBLISH calls per message
/// (from INFO commandstats, read before and after the send window).
/// Usage: ScaleOutLoad --ports P1,P2,.. --redis-port P [--clients 30] [--senders 10] [--rate 1000] [--seconds 10]
/// </summary>
internal static class Program
{
    private static async Task<int> Main(string[] args)
    {
        var options = Options(args);
        var ports = options["--ports"].Split(',').Select(p => int.Parse(p, CultureInfo.InvariantCulture)).ToArray();
        var redisPort = int.Parse(options["--redis-port"], CultureInfo.InvariantCulture);
        var clients = Int(options, "--clients", 30);
        var senders = Math.Min(Int(options, "--senders", 10), clients);
        var rate = Int(options, "--rate", 1000);
        var seconds = Int(options, "--seconds", 10);

        var members = new Member[clients];
        for (var i = 0; i < clients; i++)
            members[i] = await Member.ConnectAsync(ports[i % ports.Length]);
        await Task.Delay(1000); // every join announced and every group set updated before timing starts

        var publishesBefore = await RedisPublishCallsAsync(redisPort);
        var started = Stopwatch.GetTimestamp();
        long sent = 0;
        var window = TimeSpan.FromSeconds(seconds);
        while (Stopwatch.GetElapsedTime(started) < window)
        {
            var due = (long)(Stopwatch.GetElapsedTime(started).TotalSeconds * rate);
            for (; sent < due; sent++)
                await members[sent % senders].SendAsync($"b {Stopwatch.GetTimestamp()}");
            await Task.Delay(1);
        }

        // Deliveries still on their way count; then stop counting.
        var expected = sent * clients;
        var drain = Stopwatch.StartNew();
        while (members.Sum(m => m.Histogram.Count) < expected && drain.Elapsed < TimeSpan.FromSeconds(5))
            await Task.Delay(20);
        var elapsed = Stopwatch.GetElapsedTime(started).TotalSeconds;
        var publishes = await RedisPublishCallsAsync(redisPort) - publishesBefore;

        // Closed first, so no receive loop still records while the histograms are merged.
        foreach (var member in members)
            await member.DisposeAsync();
        var all = new LatencyHistogram();
        foreach (var member in members)
            all.Add(member.Histogram);
        var counts = string.Create(CultureInfo.InvariantCulture,
            $"nodes={ports.Length} clients={clients} senders={senders} rate={rate}/s sent={sent} delivered={all.Count}/{expected} delivered/s={all.Count / elapsed:F0}");
        var times = string.Create(CultureInfo.InvariantCulture,
            $"p50={all.ValueAtQuantile(0.50) / 1e6:F2}ms p99={all.ValueAtQuantile(0.99) / 1e6:F2}ms max={all.Max / 1e6:F2}ms publishes/message={publishes / (double)Math.Max(sent, 1):F3}");
        Console.WriteLine($"{counts} {times}");
        return all.Count == expected ? 0 : 1;
    }

    /// <summary>Calls of PUBLISH so far, from INFO commandstats (cmdstat_publish:calls=N,...), over a raw RESP connection.</summary>
    private static async Task<long> RedisPublishCallsAsync(int port)
    {
        using var client = new TcpClient();
        await client.ConnectAsync("127.0.0.1", port);
        var stream = client.GetStream();
        await stream.WriteAsync(Encoding.ASCII.GetBytes("INFO commandstats\r\nQUIT\r\n"));
        var text = await new StreamReader(stream, Encoding.ASCII).ReadToEndAsync();
        var line = text.Split("\r\n").FirstOrDefault(l => l.StartsWith("cmdstat_publish:", StringComparison.Ordinal));
        return line is null ? 0 : long.Parse(line.Split(',')[0]["cmdstat_publish:calls=".Length..], CultureInfo.InvariantCulture);
    }

    private static Dictionary<string, string> Options(string[] args)
    {
        var options = new Dictionary<string, string>(StringComparer.Ordinal);
        for (var i = 0; i + 1 < args.Length; i += 2)
            options[args[i]] = args[i + 1];
        foreach (var required in new[] { "--ports", "--redis-port" })
        {
            if (!options.ContainsKey(required))
                throw new ArgumentException($"{required} is required. Usage: ScaleOutLoad --ports P1,P2 --redis-port P [--clients N] [--senders N] [--rate N] [--seconds N]");
        }

        return options;
    }

    private static int Int(Dictionary<string, string> options, string name, int fallback) =>
        options.TryGetValue(name, out var text) ? int.Parse(text, CultureInfo.InvariantCulture) : fallback;
}

/// <summary>One chat member: a WebSocket that times every "b TIMESTAMP" message it receives into its own histogram.</summary>
internal sealed class Member : IAsyncDisposable
{
    private readonly ClientWebSocket _socket = new();
    private Task _receiving = Task.CompletedTask;

    public LatencyHistogram Histogram { get; } = new();

    public static async Task<Member> ConnectAsync(int port)
    {
        var member = new Member();
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(10));
        await member._socket.ConnectAsync(new Uri($"ws://127.0.0.1:{port}/"), timeout.Token);
        member._receiving = member.ReceiveAllAsync();
        return member;
    }

    public Task SendAsync(string text) => _socket.SendAsync(Encoding.UTF8.GetBytes(text), WebSocketMessageType.Text, true, CancellationToken.None);

    private async Task ReceiveAllAsync()
    {
        var buffer = new byte[4096];
        try
        {
            while (true)
            {
                var result = await _socket.ReceiveAsync(buffer, CancellationToken.None);
                if (result.MessageType == WebSocketMessageType.Close)
                    return;
                var now = Stopwatch.GetTimestamp();
                // "[lobby] ADDRESS@NODE: b TIMESTAMP": short enough to come in one piece.
                var text = Encoding.UTF8.GetString(buffer, 0, result.Count);
                var at = text.LastIndexOf(": b ", StringComparison.Ordinal);
                if (result.EndOfMessage && at >= 0 && long.TryParse(text.AsSpan(at + 4), NumberStyles.None, CultureInfo.InvariantCulture, out var sentAt))
                    Histogram.RecordTicks(now - sentAt);
            }
        }
        catch (WebSocketException)
        {
            // The node closed: the run is over.
        }
    }

    public async ValueTask DisposeAsync()
    {
        try
        {
            using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(5));
            await _socket.CloseAsync(WebSocketCloseStatus.NormalClosure, "done", timeout.Token);
        }
        catch (Exception e) when (e is WebSocketException or OperationCanceledException)
        {
            // Closing is best effort at the end of a run.
        }

        await _receiving.WaitAsync(TimeSpan.FromSeconds(5));
        _socket.Dispose();
    }
}
