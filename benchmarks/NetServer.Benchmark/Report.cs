using System;
using System.Globalization;
using System.Text.Json;
using System.Text.Json.Serialization;

namespace NetServer.Benchmark;

/// <summary>
/// The seeds' figures plus allocations (and for udp the datagram figures), as text and as one JSON
/// line. Messages are bytes / size, except where they were counted one by one
/// (<paramref name="CountedMessages"/>: msg and proto, whose bytes are then messages x size, the
/// payloads without their prefixes, envelopes or frame headers). proto adds <paramref name="Proto"/>,
/// ws and wss <paramref name="Text"/> (whether the messages were text).
/// </summary>
internal sealed record Report(
    string Protocol,
    string Scenario,
    string Role,
    string Address,
    int Clients,
    int Messages,
    int Size,
    double Seconds,
    long Errors,
    double TotalSeconds,
    long TotalBytes,
    long AllocatedBytes,
    DatagramFigures? Datagrams = null,
    long? CountedMessages = null,
    string? Transport = null,
    ProtoFigures? Proto = null,
    bool? Text = null,
    RelayFigures? Relay = null,
    double? ServerCpuSeconds = null)
{
    private static readonly JsonSerializerOptions s_json = new() { DefaultIgnoreCondition = JsonIgnoreCondition.WhenWritingNull, PropertyNamingPolicy = JsonNamingPolicy.CamelCase };

    public long TotalMessages => CountedMessages ?? TotalBytes / Size;

    public double BytesPerSecond => TotalSeconds > 0 ? TotalBytes / TotalSeconds : 0;

    public double MessagesPerSecond => TotalSeconds > 0 ? TotalMessages / TotalSeconds : 0;

    public double LatencyNanoseconds => TotalMessages > 0 ? TotalSeconds * 1e9 / TotalMessages : 0;

    public double MessagesPerSecondPerClient => Clients > 0 ? MessagesPerSecond / Clients : 0;

    public double AllocatedBytesPerMessage => TotalMessages > 0 ? (double)AllocatedBytes / TotalMessages : 0;

    /// <summary>The server process's CPU time per message in the measured window (--server-pid), in nanoseconds.</summary>
    public double? ServerCpuNsPerMessage => ServerCpuSeconds is { } cpu && TotalMessages > 0 ? cpu * 1e9 / TotalMessages : null;

    public void Print(bool json)
    {
        var c = CultureInfo.InvariantCulture;
        Console.WriteLine();
        Console.WriteLine($"Errors: {Errors}");
        Console.WriteLine();
        Console.WriteLine(string.Create(c, $"Total time: {FormatSeconds(TotalSeconds)}"));
        Console.WriteLine($"Total data: {FormatBytes(TotalBytes)}");
        Console.WriteLine($"Total messages: {TotalMessages}");
        Console.WriteLine($"Data throughput: {FormatBytes((long)BytesPerSecond)}/s");
        Console.WriteLine($"Message latency: {FormatNanoseconds(LatencyNanoseconds)}");
        Console.WriteLine(string.Create(c, $"Message throughput: {MessagesPerSecond:F0} msg/s"));
        Console.WriteLine(string.Create(c, $"Allocated: {AllocatedBytesPerMessage:F3} B/msg ({FormatBytes(AllocatedBytes)} in this process, {Role})"));
        if (ServerCpuNsPerMessage is { } serverCpu)
            Console.WriteLine(string.Create(c, $"Server CPU: {serverCpu:F1} ns/msg ({ServerCpuSeconds:F2} s of user + system time in the measured window)"));
        if (Proto is { } p)
        {
            Console.WriteLine(p.Typed switch
            {
                true => "Echo: typed (the server unpacks each payload and sends it back serialized)",
                false => "Echo: envelopes sent back as they came (parsed and checked in place, nothing unpacked)",
                null => "Echo: as the server chooses (--typed on its side); this client sends envelopes back as they came",
            });
            Console.WriteLine(string.Create(c, $"protobuf-net alone: {p.DeserializeBytes:F3} B per Serializer.Deserialize<BenchPing> of the {Size}-byte payload"));
        }

        if (Relay is { } r)
        {
            Console.WriteLine($"Relay: {r.Forwarded} messages forwarded (its own count, the measured window)");
            if (r.ServerBytesPerMessage is { } relayPerMessage)
                Console.WriteLine(string.Create(c, $"Relay alone: {relayPerMessage:F4} B allocated per forwarded message (steady state)"));
        }

        if (Text is { } text)
            Console.WriteLine($"Messages: {(text ? "text" : "binary")}");
        if (Datagrams is { } d)
            PrintDatagrams(d);
        if (!json)
            return;
        Console.WriteLine(JsonSerializer.Serialize(new
        {
            protocol = Protocol,
            transport = Transport,
            scenario = Scenario,
            role = Role,
            address = Address,
            clients = Clients,
            messages = Messages,
            size = Size,
            seconds = Seconds,
            errors = Errors,
            totalSeconds = Math.Round(TotalSeconds, 3),
            totalBytes = TotalBytes,
            totalMessages = TotalMessages,
            bytesPerSecond = Math.Round(BytesPerSecond),
            messagesPerSecond = Math.Round(MessagesPerSecond),
            latencyNs = Math.Round(LatencyNanoseconds, 1),
            allocatedBytes = AllocatedBytes,
            allocatedBytesPerMessage = Math.Round(AllocatedBytesPerMessage, 4),
            messagesPerSecondPerClient = Clients > 0 ? Math.Round(MessagesPerSecondPerClient) : (double?)null,
            typed = Proto?.Typed,
            text = Text,
            protobufNetBytesPerDeserialize = Proto is { } figures ? Math.Round(figures.DeserializeBytes, 3) : (double?)null,
            datagrams = Datagrams,
            relayForwarded = Relay?.Forwarded,
            relayBytesPerForward = Relay?.ServerBytesPerMessage is { } relayBytes ? Math.Round(relayBytes, 4) : (double?)null,
            serverCpuSeconds = ServerCpuSeconds is { } cpu ? Math.Round(cpu, 2) : (double?)null,
            serverCpuNsPerMessage = ServerCpuNsPerMessage is { } perMessage ? Math.Round(perMessage, 1) : (double?)null,
        }, s_json));
    }

    private void PrintDatagrams(DatagramFigures d)
    {
        var c = CultureInfo.InvariantCulture;
        if (Clients > 0)
            Console.WriteLine(string.Create(c, $"Message throughput per client: {MessagesPerSecondPerClient:F0} msg/s"));
        if (d.Received is { } received)
        {
            var line = string.Create(c, $"Datagrams (whole run): received {received}");
            if (d.Sent is { } sent)
                line += $", sent {sent} (refills {d.Refills ?? 0})";
            if (d.Expected is { } expected)
                line += $", expected by number {expected}";
            line += d.Lost is { } lost ? string.Create(c, $", lost {lost} ({d.LossPercent ?? 0:F3} %)") : ", loss not measured (numbers need size >= 8)";
            Console.WriteLine(line);
        }

        if (d.ServerReceived is { } serverReceived)
            Console.WriteLine($"Server datagrams (whole run): received {serverReceived}, sent {d.ServerSent}, dropped by a full send queue {d.ServerDropped}");
    }

    public static string FormatBytes(long bytes)
    {
        var c = CultureInfo.InvariantCulture;
        return bytes switch
        {
            >= 1L << 30 => string.Create(c, $"{bytes / (double)(1L << 30):F3} GiB"),
            >= 1L << 20 => string.Create(c, $"{bytes / (double)(1L << 20):F3} MiB"),
            >= 1L << 10 => string.Create(c, $"{bytes / 1024.0:F3} KiB"),
            _ => $"{bytes} bytes",
        };
    }

    public static string FormatSeconds(double seconds) => string.Create(CultureInfo.InvariantCulture, $"{seconds:F3} s");

    public static string FormatNanoseconds(double ns)
    {
        var c = CultureInfo.InvariantCulture;
        return ns switch
        {
            >= 1e6 => string.Create(c, $"{ns / 1e6:F3} ms"),
            >= 1e3 => string.Create(c, $"{ns / 1e3:F3} mcs"),
            _ => string.Create(c, $"{ns:F0} ns"),
        };
    }
}

/// <summary>
/// proto: whether the echo was typed (null: a client role, the server decides), and protobuf-net's
/// own allocation per deserialization of the payload (the floor for a typed echo's B/msg).
/// </summary>
internal sealed record ProtoFigures(bool? Typed, double DeserializeBytes);

/// <summary>relay: the messages the relay counted as forwarded in the window, and (its own process) the bytes it allocated per forwarded message.</summary>
internal sealed record RelayFigures(long Forwarded, double? ServerBytesPerMessage);
