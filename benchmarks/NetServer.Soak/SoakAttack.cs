using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Diagnostics;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace NetServer.Soak;

/// <summary>
/// Slow attacks on the soak server's HTTP and WebSocket servers, with a well-behaved client beside
/// them: slowloris connections that send a request head a byte at a time, and WebSocket clients
/// that send and never read. Reports how many the server closed and when, and how the good client
/// fared meanwhile.
/// </summary>
internal sealed class SoakAttack(int httpPort, int wsPort)
{
    private static readonly byte[] s_slowHead = "GET /hello HTTP/1.1\r\nHost: soak\r\nX-Slow: "u8.ToArray();
    private readonly Stopwatch _clock = Stopwatch.StartNew();
    private readonly ConcurrentBag<double> _closedAfter = [];
    private readonly ConcurrentBag<double> _wsClosedAfter = [];
    private readonly ConcurrentBag<double> _goodLatencies = [];
    private long _goodFailures;

    public async Task<int> RunAsync(int slowloris, int nonReaders, TimeSpan duration)
    {
        using var stop = new CancellationTokenSource(duration);
        var good = GoodClientAsync(stop.Token);
        var slow = SlowlorisAsync(slowloris, stop.Token);
        var ws = NonReadersAsync(nonReaders, stop.Token);
        await Task.WhenAll(good, slow, ws);

        string Median(ConcurrentBag<double> values) => values.IsEmpty ? "-" : $"{values.Order().ElementAt(values.Count / 2):F1} s";
        var latencies = _goodLatencies.Order().ToArray();
        Console.WriteLine($"slowloris: {_closedAfter.Count} of {slowloris} connections closed by the server (median {Median(_closedAfter)}, last {(_closedAfter.IsEmpty ? "-" : $"{_closedAfter.Max():F1} s")} after connecting)");
        Console.WriteLine($"ws non-readers: {_wsClosedAfter.Count} of {nonReaders} closed by the server (median {Median(_wsClosedAfter)} after the upgrade)");
        Console.WriteLine(latencies.Length == 0
            ? $"good client: no request answered, {_goodFailures} failures"
            : $"good client: {latencies.Length} requests answered, {_goodFailures} failed, p50 {latencies[latencies.Length / 2]:F2} ms, p99 {latencies[(int)(latencies.Length * 0.99)]:F2} ms, max {latencies[^1]:F2} ms");
        return _goodFailures == 0 && latencies.Length > 0 && _closedAfter.Count == slowloris && _wsClosedAfter.Count == nonReaders ? 0 : 1;
    }

    private double Seconds => _clock.Elapsed.TotalSeconds;

    /// <summary>A keep-alive HTTP client asking every 10 ms throughout, each answer timed.</summary>
    private async Task GoodClientAsync(CancellationToken stop)
    {
        using var client = new System.Net.Http.HttpClient { Timeout = TimeSpan.FromSeconds(10) };
        var uri = new Uri($"http://127.0.0.1:{httpPort}/hello");
        while (!stop.IsCancellationRequested)
        {
            var started = Stopwatch.GetTimestamp();
            try
            {
                using var response = await client.GetAsync(uri, CancellationToken.None);
                if (response.StatusCode == HttpStatusCode.OK)
                    _goodLatencies.Add(Stopwatch.GetElapsedTime(started).TotalMilliseconds);
                else
                    Interlocked.Increment(ref _goodFailures);
            }
            catch (Exception e) when (e is System.Net.Http.HttpRequestException or TaskCanceledException)
            {
                Interlocked.Increment(ref _goodFailures);
            }

            await Task.Delay(10, CancellationToken.None);
        }
    }

    /// <summary>Connects <paramref name="count"/> sockets (500 at a time), each sending a head that stops inside a field value, then one more byte of that value every 5 s until the server closes it.</summary>
    private async Task SlowlorisAsync(int count, CancellationToken stop)
    {
        var open = new List<(Socket Socket, double Connected)>();
        for (var i = 0; i < count && !stop.IsCancellationRequested; i += 500)
        {
            var batch = Enumerable.Range(0, Math.Min(500, count - i)).Select(async _ =>
            {
                var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
                await socket.ConnectAsync(IPAddress.Loopback, httpPort);
                await socket.SendAsync(s_slowHead);
                return socket;
            });
            foreach (var socket in await Task.WhenAll(batch))
                open.Add((socket, Seconds));
        }

        var buffer = new byte[4096];
        while (open.Count > 0 && !stop.IsCancellationRequested)
        {
            for (var i = open.Count - 1; i >= 0; i--)
            {
                var (socket, connected) = open[i];
                if (Closed(socket, buffer) || !TrySend(socket, (byte)'a'))
                {
                    _closedAfter.Add(Seconds - connected);
                    socket.Dispose();
                    open.RemoveAt(i);
                }
            }

            await Task.Delay(TimeSpan.FromSeconds(5), CancellationToken.None);
        }

        foreach (var (socket, _) in open)
            socket.Dispose();
    }

    /// <summary>Connects <paramref name="count"/> WebSocket clients that then send 16 KiB frames as fast as the server takes them, and never read.</summary>
    private async Task NonReadersAsync(int count, CancellationToken stop)
    {
        var clients = await Task.WhenAll(Enumerable.Range(0, count).Select(_ => UpgradeAsync()));
        var frame = new byte[16 * 1024 + 8];
        frame[0] = 0x82; frame[1] = 0x80 | 126; frame[2] = 0x40; frame[3] = 0x00; // binary, masked, 16 KiB; mask key 0
        // Sent: how far into the frame each client is (a non-blocking send may take part of it).
        var open = clients.Select(c => (Socket: c, Upgraded: Seconds, Sent: 0)).ToList();
        while (open.Count > 0 && !stop.IsCancellationRequested)
        {
            for (var i = open.Count - 1; i >= 0; i--)
            {
                var socket = open[i].Socket;
                try
                {
                    var sent = open[i].Sent;
                    while (socket.Poll(0, SelectMode.SelectWrite) && socket.Send(frame, sent, frame.Length - sent, SocketFlags.None) is > 0 and var n)
                        sent = (sent + n) % frame.Length;
                    open[i] = open[i] with { Sent = sent };
                }
                catch (SocketException)
                {
                    _wsClosedAfter.Add(Seconds - open[i].Upgraded);
                    socket.Dispose();
                    open.RemoveAt(i);
                }
            }

            await Task.Delay(TimeSpan.FromSeconds(1), CancellationToken.None);
        }

        foreach (var (socket, _, _) in open)
            socket.Dispose();
    }

    private async Task<Socket> UpgradeAsync()
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await socket.ConnectAsync(IPAddress.Loopback, wsPort);
        await socket.SendAsync(Encoding.ASCII.GetBytes($"GET /ws HTTP/1.1\r\nHost: soak\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"));
        var head = new StringBuilder();
        var buffer = new byte[1];
        while (!head.ToString().EndsWith("\r\n\r\n", StringComparison.Ordinal) && await socket.ReceiveAsync(buffer) == 1)
            head.Append((char)buffer[0]);
        if (!head.ToString().StartsWith("HTTP/1.1 101", StringComparison.Ordinal))
            throw new InvalidOperationException("No 101: " + head);
        socket.Blocking = false;
        return socket;
    }

    // The server closed (or answered 408 and closed): a read finds the end, a reset or an answer.
    private static bool Closed(Socket socket, byte[] buffer)
    {
        try
        {
            return socket.Poll(0, SelectMode.SelectRead) && socket.Receive(buffer) >= 0;
        }
        catch (SocketException)
        {
            return true;
        }
    }

    private static bool TrySend(Socket socket, byte value)
    {
        try
        {
            return socket.Send([value]) == 1;
        }
        catch (SocketException)
        {
            return false;
        }
    }
}
