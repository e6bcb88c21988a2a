using System;
using System.Buffers.Binary;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Net.WebSockets;
using System.Runtime.InteropServices;
using System.Security.Authentication;
using System.Security.Cryptography;
using System.Threading;
using System.Threading.Tasks;

namespace NetServer.Benchmark;

internal static partial class Program
{
    private static async Task<int> Main(string[] args)
    {
        Options? options;
        try
        {
            options = Options.Parse(args, Console.Error);
        }
        catch (Exception e) when (e is ArgumentException or FormatException)
        {
            Console.Error.WriteLine(e.Message);
            Console.Error.WriteLine(Options.Usage);
            return 2;
        }

        if (options is null)
        {
            Console.WriteLine(Options.Usage);
            return 0;
        }

        // relay forward runs its own peers (RelayServer, RelayClient), not the factory's.
        if (options.IsRelay)
        {
            ApplyRuntimeOptions(options);
            using var relayTracer = options.TraceAllocations ? new AllocationTracer() : null;
            AllocationTracer.Current = relayTracer;
            var relayCode = await RunRelayAsync(options);
            relayTracer?.Print();
            return relayCode;
        }

        PeerFactory peers;
        try
        {
            peers = PeerFactory.Create(options);
        }
        catch (Exception e) when (e is IOException or CryptographicException)
        {
            Console.Error.WriteLine($"Cannot load the TLS certificates: {e.Message}");
            return 2;
        }

        ApplyRuntimeOptions(options);

        PrintHeader(options, peers);
        using var telemetry = options.Telemetry ? new TelemetrySink(traces: !options.TelemetryMetricsOnly) : null;
        using var tracer = options.TraceAllocations ? new AllocationTracer() : null;
        AllocationTracer.Current = tracer;
        var code = options.Role switch
        {
            Role.Server => await RunServerAsync(options, peers),
            Role.Client => await RunClientAsync(options, peers, peers.Target),
            _ => await RunBothAsync(options, peers),
        };
        tracer?.Print();
        telemetry?.Print();
        return code;
    }

    /// <summary>The socket engine's settings, read when it first starts, so set before any socket exists.</summary>
    private static void ApplyRuntimeOptions(Options options)
    {
        if (options.Threads > 0)
            Environment.SetEnvironmentVariable("DOTNET_SYSTEM_NET_SOCKETS_THREAD_COUNT", options.Threads.ToString(CultureInfo.InvariantCulture));
        if (options.InlineCompletions)
            Environment.SetEnvironmentVariable("DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS", "1");
    }

    private static async Task<int> RunBothAsync(Options options, PeerFactory peers)
    {
        using var server = peers.CreateServer();
        server.Start();
        using var cts = new CancellationTokenSource();
        var multicasting = options.Scenario == "multicast" ? MulticastLoopAsync(server, options, cts.Token) : Task.CompletedTask;
        var code = await RunClientAsync(options, peers, server.ClientTarget, server, async () =>
        {
            // Stop producing before the clients go, so the last figures are not disturbed.
            await cts.CancelAsync();
            await multicasting;
        });
        server.Stop();
        return code;
    }

    /// <summary>
    /// The multicast scenario's server side: one message after another, as fast as the slowest client
    /// allows (udp: as fast as the socket takes them; nothing slows a datagram sender down), or at
    /// --rate messages per second. udp datagrams carry their number, for the clients' loss count.
    /// </summary>
    private static async Task MulticastLoopAsync(ServerHandle server, Options options, CancellationToken token)
    {
        var message = new byte[options.Size];
        Array.Fill(message, (byte)'m');
        var numbered = options.Protocol == "udp" && options.Size >= DatagramBehavior.SequenceBytes;
        try
        {
            var sent = 0L;
            var start = 0L;
            while (!token.IsCancellationRequested)
            {
                if (!server.HasAudience)
                {
                    await Task.Delay(10, token);
                    continue;
                }

                if (start == 0)
                    start = Stopwatch.GetTimestamp();
                if (options.Rate > 0 && sent >= options.Rate * Stopwatch.GetElapsedTime(start).TotalSeconds)
                {
                    await Task.Delay(1, token);
                    continue;
                }

                // The previous send has completed, so its memory may change: a queued datagram is a copy.
                if (numbered)
                    BinaryPrimitives.WriteInt64LittleEndian(message, sent);
                await server.MulticastAsync(message, token);

                // Multicasts that never wait complete synchronously: let the I/O work run now and then.
                if (++sent % 256 == 0)
                    await Task.Yield();
            }
        }
        catch (OperationCanceledException)
        {
            // The run is over.
        }
    }

    private static async Task<int> RunServerAsync(Options options, PeerFactory peers)
    {
        using var server = peers.CreateServer();
        server.Start();
        Console.WriteLine($"Server listening on {server.Endpoint}; {(options.Seconds > 0 ? $"stops after {options.Seconds} s" : "press Enter or Ctrl+C to stop")}.");
        using var cts = new CancellationTokenSource();
        Console.CancelKeyPress += (_, e) =>
        {
            e.Cancel = true;
            cts.Cancel();
        };

        // Scripts stop a server in the background with SIGTERM (build/bench-http.sh): end as after Ctrl+C, with the report.
        using var terminate = PosixSignalRegistration.Create(PosixSignal.SIGTERM, context =>
        {
            context.Cancel = true;
            cts.Cancel();
        });
        if (options.Seconds > 0)
            cts.CancelAfter(TimeSpan.FromSeconds(options.Seconds));
        else
            _ = Task.Run(() =>
            {
                Console.ReadLine();
                cts.Cancel();
            });

        var multicasting = options.Scenario == "multicast" ? MulticastLoopAsync(server, options, cts.Token) : Task.CompletedTask;

        // Steady state: from one second after traffic starts until the last second with traffic.
        // A sample counts bytes, established sessions in the handshake scenario, or requests for
        // http (counted one by one, as kestrel-reference does, to compare its --stats). A msg message is
        // SIZE bytes and its 4-byte length prefix on the wire, a proto message our client's envelope
        // and its prefix, a ws message a frame (a client's, masked, received in echo; the server's,
        // sent in multicast). The server does not count messages one by one: that would add work to
        // its hot path that the other servers do not do.
        var handshakes = options.Scenario == "handshake";
        var message = options.IsMessageProtocol || options.IsWebSocket;
        var http = options.IsHttp;
        var unit = handshakes || http ? 1
            : options.Protocol == "proto" ? peers.Envelope.Length + MessageProtocol.HeaderSize
            : options.IsWebSocket ? WsWire.FrameLength(options.Size, masked: options.Scenario == "echo")
            : message ? options.Size + MessageProtocol.HeaderSize : options.Size;
        var samples = new List<(double Time, long Count, long Bytes, long Allocated)>();
        var baseline = options.Memory ? GC.GetTotalMemory(forceFullCollection: true) : 0;
        var watch = Stopwatch.StartNew();
        var hadTraffic = false;
        while (!cts.IsCancellationRequested)
        {
            try
            {
                await Task.Delay(1000, cts.Token);
            }
            catch (OperationCanceledException)
            {
                break;
            }

            if (options.Memory)
                PrintMemory(server, baseline);

            var count = options.Scenario switch
            {
                "multicast" => server.BytesSent,
                "handshake" => server.Counters.Established,
                _ when http => server.Counters.Requests,
                _ => server.BytesReceived,
            };
            samples.Add((watch.Elapsed.TotalSeconds, count, server.BytesReceived, GC.GetTotalAllocatedBytes(precise: true)));
            if (samples.Count > 1 && count > samples[^2].Count && !hadTraffic)
            {
                hadTraffic = true;
                AllocationTracer.Current?.StartWindow(); // the steady-state window below starts at this sample
            }

            if (!options.Quiet && samples.Count > 1)
            {
                var (t0, c0, _, a0) = samples[^2];
                var (t1, c1, _, a1) = samples[^1];
                var units = (c1 - c0) / unit;
                if (http)
                {
                    // Raw figures, the words of kestrel-reference's --stats lines, so one script sums both; quiet seconds left out as there.
                    if (units > 0)
                        Console.Error.WriteLine(string.Create(CultureInfo.InvariantCulture,
                            $"progress: {t1,6:F1} s  sessions {server.ConnectedSessions}  {units} requests  {a1 - a0} B allocated  {(a1 - a0) / (double)units:F1} B/request"));
                    continue;
                }

                if (options.IsWebSocket)
                {
                    // Raw figures as well, in the words of kestrel-reference's --stats lines (build/bench-ws.sh sums both).
                    Console.Error.WriteLine(string.Create(CultureInfo.InvariantCulture,
                        $"progress: {t1,6:F1} s  sessions {server.ConnectedSessions}  {units / (t1 - t0),12:F0} msg/s  {units} ws messages  {a1 - a0} B allocated  {(units > 0 ? (a1 - a0) / (double)units : 0):F3} B/msg"));
                    continue;
                }

                var name = handshakes ? "hs" : "msg";
                Console.Error.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"progress: {t1,6:F1} s  sessions {server.ConnectedSessions}  {units / (t1 - t0),12:F0} {name}/s  {(units > 0 ? (a1 - a0) / (double)units : 0),8:F3} B/{name} allocated"));
            }
        }

        await multicasting;
        server.Stop();

        var active = samples.Select((s, i) => (s, i)).Where(x => x.i > 0 && x.s.Count > samples[x.i - 1].Count).Select(x => x.i).ToList();
        if (active.Count < 3)
        {
            Console.WriteLine("Not enough traffic for a steady-state figure.");
            return 0;
        }

        var first = samples[active[0]]; // skip the first active second (warm-up, JIT, connects)
        var last = samples[active[^1]];
        var address = server.Endpoint.ToString() ?? "";
        if (handshakes)
        {
            new HandshakeReport(options.Protocol, "server", address, 0, options.Seconds, server.Errors, last.Time - first.Time,
                last.Count - first.Count, 0, last.Allocated - first.Allocated).Print(options.Json);
        }
        else
        {
            var messages = (last.Count - first.Count) / unit;
            var bytes = http ? last.Bytes - first.Bytes : message ? messages * options.Size : last.Count - first.Count;
            new Report(options.Protocol, options.Scenario, "server", address, 0, options.Messages, options.Size,
                options.Seconds, server.Errors, last.Time - first.Time, bytes, last.Allocated - first.Allocated, server.Datagrams,
                message || http ? messages : null, message || http ? options.Transport : null, ProtoFigures(options), WsText(options)).Print(options.Json);
        }

        return server.Errors == 0 ? 0 : 1;
    }

    /// <summary>The managed heap after a full collection, per connected session, above the heap with no session.</summary>
    private static void PrintMemory(ServerHandle server, long baseline)
    {
        var heap = GC.GetTotalMemory(forceFullCollection: true);
        var sessions = server.ConnectedSessions;
        var perSession = sessions > 0 ? (heap - baseline) / (double)sessions : 0;
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"memory: sessions {sessions}  managed heap {Report.FormatBytes(heap)}  per session {perSession:F0} B (baseline {Report.FormatBytes(baseline)})"));
    }

    /// <summary>The client role; <paramref name="server"/> is the server when it runs in this process (its errors count, and udp reports its totals).</summary>
    private static Task<int> RunClientAsync(Options options, PeerFactory peers, EndPoint target, ServerHandle? server = null, Func<Task>? measured = null) =>
        options.Scenario switch
        {
            "handshake" => RunHandshakeClientAsync(options, peers, target, server is null ? null : () => server.Errors, measured),
            "latency" => RunLatencyClientAsync(options, peers, target, server, measured),
            _ => RunTrafficClientAsync(options, peers, target, server, measured),
        };

    /// <summary>How long datagrams still in flight when the run is over may take to come back before they count as lost.</summary>
    private static readonly TimeSpan s_datagramGrace = TimeSpan.FromSeconds(1);

    /// <summary>The echo, reply and multicast client: connects every client, then measures the bytes received.</summary>
    private static async Task<int> RunTrafficClientAsync(Options options, PeerFactory peers, EndPoint target, ServerHandle? server, Func<Task>? measured)
    {
        var clients = new List<ClientHandle>(options.Clients);
        for (var i = 0; i < options.Clients; i++)
            clients.Add(peers.CreateTrafficClient(target));
        if (!await ConnectAllAsync(clients, target, measured))
            return 1;

        // msg, proto and ws clients count messages one by one (the data figure is then messages x
        // size, payloads without their prefixes, envelopes or frame headers), http clients responses
        // (and bytes as received); the others count bytes, and messages are bytes / size.
        var counted = options.IsMessageProtocol || options.IsHttp || options.IsWebSocket;
        long Received() => clients.Sum(c => c.Counters.Received);
        long Messages() => counted ? clients.Sum(c => c.Counters.Messages) : Received() / options.Size;

        // The window's edges: each client's bytes and messages read side by side, so that a pause
        // of this thread between two sums over all clients (a preemption, a GC) cannot put a
        // stretch of traffic in one count and not in the other.
        (long Bytes, long Messages) Edge()
        {
            long bytes = 0, messages = 0;
            foreach (var client in clients)
            {
                bytes += client.Counters.Received;
                messages += client.Counters.Messages;
            }

            return (bytes, counted ? messages : bytes / options.Size);
        }
        long Errors() => clients.Sum(c => c.Counters.Errors) + (server?.Errors ?? 0);

        using var ticking = new CancellationTokenSource();
        var ticks = TickEverySecondAsync(clients, ticking.Token);
        await WarmUpAsync(options);
        var watch = Stopwatch.StartNew();
        var (bytes0, messages0) = Edge();
        var allocated0 = GC.GetTotalAllocatedBytes(precise: true);
        var serverCpu0 = options.ServerPid is { } pid0 ? ProcessCpu.Seconds(pid0) : null;
        AllocationTracer.Current?.StartWindow();
        var lastTime = 0.0;
        var lastMessages = messages0;
        var total = await WaitOutRunAsync(options, watch, now =>
        {
            var messages = Messages();
            var line = string.Create(CultureInfo.InvariantCulture,
                $"progress: {now,6:F1} s  {(messages - lastMessages) / Math.Max(now - lastTime, 1e-9),12:F0} msg/s  errors {Errors()}");
            lastTime = now;
            lastMessages = messages;
            return line;
        });
        var (bytes1, messages1) = Edge();
        var allocated1 = GC.GetTotalAllocatedBytes(precise: true);
        var serverCpu1 = options.ServerPid is { } pid1 ? ProcessCpu.Seconds(pid1) : null;

        await ticking.CancelAsync();
        await ticks;
        var datagrams = options.IsDatagram ? await CountDatagramsAsync(options, clients, server) : null;
        if (measured is not null)
            await measured();
        await Task.WhenAll(clients.Select(c => c.DisposeAsync().AsTask()));

        var report = new Report(options.Protocol, options.Scenario, ClientRole(options), target.ToString() ?? "",
            options.Clients, options.IsHttp ? options.Depth : options.Messages, options.Size, options.Seconds, Errors(), total,
            options.IsMessageProtocol || options.IsWebSocket ? (messages1 - messages0) * options.Size : bytes1 - bytes0, allocated1 - allocated0, datagrams,
            counted ? messages1 - messages0 : null, counted ? options.Transport : null, ProtoFigures(options), WsText(options),
            ServerCpuSeconds: serverCpu1 - serverCpu0);
        report.Print(options.Json);
        return report.Errors == 0 ? 0 : 1;
    }

    /// <summary>
    /// Connects every client; when one cannot connect, says why on stderr, ends the measured part
    /// and disposes the clients, and returns false.
    /// </summary>
    private static async Task<bool> ConnectAllAsync(List<ClientHandle> clients, EndPoint target, Func<Task>? measured)
    {
        // Connect in modest batches so a large client count does not overflow the listen backlog.
        string? failure = null;
        try
        {
            using var connectTimeout = new CancellationTokenSource(TimeSpan.FromSeconds(60));
            foreach (var batch in clients.Chunk(256))
                await Task.WhenAll(batch.Select(c => c.ConnectAsync(connectTimeout.Token)));

            // A connection that closed during its handshake ends the connect with false rather than an exception.
            if (clients.FirstOrDefault(c => c.Failure is not null) is { } closed)
                failure = $"a connection closed while connecting ({closed.Failure})";
        }
        catch (Exception e) when (e is SocketException or AuthenticationException or IOException or TimeoutException or OperationCanceledException or WebSocketException)
        {
            failure = ErrorText.Describe(e);
        }

        if (failure is null)
            return true;
        Console.Error.WriteLine($"Cannot connect to {target}: {failure}");
        if (measured is not null)
            await measured();
        await Task.WhenAll(clients.Select(c => c.DisposeAsync().AsTask()));
        return false;
    }

    private static async Task TickEverySecondAsync(List<ClientHandle> clients, CancellationToken token)
    {
        using var timer = new PeriodicTimer(TimeSpan.FromSeconds(1));
        try
        {
            while (await timer.WaitForNextTickAsync(token))
            {
                foreach (var client in clients)
                    client.Tick();
            }
        }
        catch (OperationCanceledException)
        {
            // The run is over.
        }
    }

    /// <summary>
    /// The udp figures of the whole run. Echo clients stop sending first and wait (up to
    /// <see cref="s_datagramGrace"/>) for the datagrams in flight, so lost = sent - received counts
    /// only what never came back. Multicast clients lost what their numbers say they missed.
    /// </summary>
    private static async Task<DatagramFigures> CountDatagramsAsync(Options options, List<ClientHandle> clients, ServerHandle? server)
    {
        foreach (var client in clients)
            client.StopSending();
        var waited = Stopwatch.StartNew();
        while (clients.Sum(c => c.InFlight) > 0 && waited.Elapsed < s_datagramGrace)
            await Task.Delay(10);

        var received = clients.Sum(c => c.Counters.DatagramsReceived);
        var figures = server?.Datagrams ?? new DatagramFigures();
        if (options.Scenario == "echo")
        {
            var sent = clients.Sum(c => c.Counters.DatagramsSent);
            return figures with { Sent = sent, Received = received, Lost = sent - received, Refills = clients.Sum(c => c.Counters.Refills) };
        }

        var expected = clients.Sum(c => c.Counters.DatagramsExpected);
        return options.Size >= DatagramBehavior.SequenceBytes
            ? figures with { Expected = expected, Received = received, Lost = expected - received }
            : figures with { Received = received };
    }

    /// <summary>
    /// proto: the echo's mode (unknown to a client of another process: --typed is the server's)
    /// and what protobuf-net alone allocates to deserialize the payload, measured after the run
    /// (on this thread, outside the measured window) for the report.
    /// </summary>
    private static ProtoFigures? ProtoFigures(Options options) =>
        options.Protocol == "proto"
            ? new ProtoFigures(options.Role == Role.Client ? null : options.Typed, ProtoEcho.DeserializeAllocation(options.Size))
            : null;

    /// <summary>ws, wss: whether the messages are text (null for the other protocols).</summary>
    private static bool? WsText(Options options) => options.IsWebSocket ? options.Text : null;

    private static string ClientRole(Options options) => options.Role == Role.Both ? "both" : "client";

    /// <summary>
    /// Waits until the run's time is up, writing <paramref name="progress"/>'s line to stderr each
    /// second unless quiet; returns the seconds elapsed on <paramref name="watch"/>.
    /// </summary>
    private static async Task<double> WaitOutRunAsync(Options options, Stopwatch watch, Func<double, string> progress)
    {
        var deadline = TimeSpan.FromSeconds(options.Seconds);
        while (true)
        {
            // Read the clock once: the time left can run out between two reads.
            var wait = deadline - watch.Elapsed;
            if (wait <= TimeSpan.Zero)
                break;
            await Task.Delay(wait < TimeSpan.FromSeconds(1) ? wait : TimeSpan.FromSeconds(1));
            if (!options.Quiet)
                Console.Error.WriteLine(progress(watch.Elapsed.TotalSeconds));
        }

        return watch.Elapsed.TotalSeconds;
    }
}

/// <summary>A Unix socket target named by its path (the client classes take the path).</summary>
internal sealed class UnixEndPointHolder(string path) : EndPoint
{
    public string Path { get; } = path;

    public override string ToString() => Path;
}
