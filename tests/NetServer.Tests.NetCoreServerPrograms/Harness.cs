using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;
using NetServer;

namespace NetCoreServerPrograms;

/// <summary>
/// What the benchmark clients count from their hooks (NetCoreServer's programs keep these in
/// static fields of <c>Program</c>; here one instance per run, so runs in parallel do not mix).
/// </summary>
public sealed class Totals
{
    private long _errors;
    private long _bytes;
    private long _messages;
    private long _startTicks = DateTime.UtcNow.Ticks;
    private long _stopTicks = DateTime.UtcNow.Ticks;

    public long Errors => Interlocked.Read(ref _errors);

    public long Bytes => Interlocked.Read(ref _bytes);

    public long Messages => Interlocked.Read(ref _messages);

    public DateTime Start
    {
        get => new(Interlocked.Read(ref _startTicks), DateTimeKind.Utc);
        set => Interlocked.Exchange(ref _startTicks, value.Ticks);
    }

    public DateTime Stop
    {
        get => new(Interlocked.Read(ref _stopTicks), DateTimeKind.Utc);
        set => Interlocked.Exchange(ref _stopTicks, value.Ticks);
    }

    public void AddError() => Interlocked.Increment(ref _errors);

    public void AddBytes(long size) => Interlocked.Add(ref _bytes, size);

    public void AddMessage() => Interlocked.Increment(ref _messages);
}

/// <summary>The parts every benchmark program shares: the client run, the report, the multicasting loop.</summary>
public static class Benchmark
{
    /// <summary>How long the client run waits for all clients to connect or to disconnect.</summary>
    public static readonly TimeSpan Patience = TimeSpan.FromSeconds(30);

    /// <summary>
    /// The client half of every benchmark: connect all clients, wait until each is ready, let them
    /// work for <paramref name="duration"/> (longer if no byte has moved yet), disconnect all, wait
    /// until none is connected, report. The waits are bounded (the benchmark programs spin on
    /// <c>Thread.Yield()</c> without a limit).
    /// </summary>
    public static async Task<Report> RunClientsAsync<TClient>(
        IReadOnlyList<TClient> clients,
        Action<TClient> connect,
        Func<TClient, bool> ready,
        Action<TClient> disconnect,
        Func<TClient, bool> connected,
        TimeSpan duration,
        Totals totals,
        Func<long> messages,
        bool stopWhenDisconnected = false)
    {
        totals.Start = DateTime.UtcNow;
        foreach (var client in clients)
            connect(client);
        foreach (var client in clients)
            await UntilAsync(() => ready(client), "a client to connect").ConfigureAwait(false);

        await Task.Delay(duration).ConfigureAwait(false);

        // On a machine starved of CPU nothing may have moved yet (a multicast server also sends in
        // bursts, once a second): wait a bounded while for the first bytes rather than report an empty run.
        var deadline = DateTime.UtcNow + Patience;
        while (totals.Bytes == 0 && DateTime.UtcNow < deadline)
            await Task.Delay(10).ConfigureAwait(false);

        foreach (var client in clients)
            disconnect(client);
        foreach (var client in clients)
            await UntilAsync(() => !connected(client), "a client to disconnect").ConfigureAwait(false);
        if (stopWhenDisconnected)
            totals.Stop = DateTime.UtcNow;

        return Report.Of(totals, messages());
    }

    /// <summary>
    /// The multicasting thread of the multicast servers: <paramref name="messagesRate"/> messages a
    /// second through <paramref name="multicast"/>, until <paramref name="cancellationToken"/> fires.
    /// </summary>
    public static Task MulticastAsync(Func<byte[], bool> multicast, int messagesRate, int messageSize, CancellationToken cancellationToken) =>
        Task.Run(
            async () =>
            {
                var message = new byte[messageSize];
                while (!cancellationToken.IsCancellationRequested)
                {
                    var start = DateTime.UtcNow;
                    for (var i = 0; i < messagesRate && !cancellationToken.IsCancellationRequested; i++)
                        multicast(message);
                    var rest = TimeSpan.FromSeconds(1) - (DateTime.UtcNow - start);
                    if (rest > TimeSpan.Zero)
                        await Task.Delay(rest, cancellationToken).ContinueWith(static _ => { }, TaskScheduler.Default).ConfigureAwait(false);
                }
            },
            cancellationToken);

    /// <summary>Polls <paramref name="condition"/> without holding a thread; throws after <see cref="Patience"/>.</summary>
    private static async Task UntilAsync(Func<bool> condition, string what)
    {
        var deadline = DateTime.UtcNow + Patience;
        while (!condition())
        {
            if (DateTime.UtcNow > deadline)
                throw new TimeoutException($"Waited {Patience.TotalSeconds} s for {what}.");
            await Task.Delay(5).ConfigureAwait(false);
        }
    }
}

/// <summary>The figures the benchmark clients print, formatted with the same <see cref="Utilities"/> calls.</summary>
public sealed record Report(long Errors, long Bytes, long Messages, IReadOnlyList<string> Lines)
{
    public static Report Of(Totals totals, long messages)
    {
        var elapsed = totals.Stop - totals.Start;
        var lines = new List<string>
        {
            $"Errors: {totals.Errors}",
            $"Total time: {Utilities.GenerateTimePeriod(elapsed.TotalMilliseconds)}",
            $"Total data: {Utilities.GenerateDataSize(totals.Bytes)}",
            $"Total messages: {messages}",
            $"Data throughput: {Utilities.GenerateDataSize((long)(totals.Bytes / elapsed.TotalSeconds))}/s",
        };
        if (messages > 0)
        {
            lines.Add($"Message latency: {Utilities.GenerateTimePeriod(elapsed.TotalMilliseconds / messages)}");
            lines.Add($"Message throughput: {(long)(messages / elapsed.TotalSeconds)} msg/s");
        }

        return new Report(totals.Errors, totals.Bytes, messages, lines);
    }
}
