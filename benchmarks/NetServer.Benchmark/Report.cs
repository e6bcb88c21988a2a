using System;
using System.Globalization;
using System.Text.Json;

namespace NetServer.Benchmark;

/// <summary>The seeds' figures plus allocations, as text and as one JSON line.</summary>
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
    long AllocatedBytes)
{
    public long TotalMessages => TotalBytes / Size;

    public double BytesPerSecond => TotalSeconds > 0 ? TotalBytes / TotalSeconds : 0;

    public double MessagesPerSecond => TotalSeconds > 0 ? TotalMessages / TotalSeconds : 0;

    public double LatencyNanoseconds => TotalMessages > 0 ? TotalSeconds * 1e9 / TotalMessages : 0;

    public double AllocatedBytesPerMessage => TotalMessages > 0 ? (double)AllocatedBytes / TotalMessages : 0;

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
        if (!json)
            return;
        Console.WriteLine(JsonSerializer.Serialize(new
        {
            protocol = Protocol,
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
        }));
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
