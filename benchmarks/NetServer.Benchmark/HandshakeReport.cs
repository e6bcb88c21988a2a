using System;
using System.Globalization;
using System.Text.Json;

namespace NetServer.Benchmark;

/// <summary>
/// The handshake scenario's figures, as text and as one JSON line: handshakes (connects for tcp and
/// uds) per second, their mean time as a client saw it, and the bytes allocated per handshake.
/// </summary>
internal sealed record HandshakeReport(
    string Protocol,
    string Role,
    string Address,
    int Clients,
    double Seconds,
    long Errors,
    double TotalSeconds,
    long Handshakes,
    double HandshakeSeconds,
    long AllocatedBytes)
{
    public double HandshakesPerSecond => TotalSeconds > 0 ? Handshakes / TotalSeconds : 0;

    /// <summary>Mean time from the start of a connect to the end of its handshake (0 on a server, which does not see it).</summary>
    public double MeanNanoseconds => Handshakes > 0 ? HandshakeSeconds * 1e9 / Handshakes : 0;

    public double AllocatedBytesPerHandshake => Handshakes > 0 ? (double)AllocatedBytes / Handshakes : 0;

    public void Print(bool json)
    {
        var c = CultureInfo.InvariantCulture;
        var (noun, title) = Protocol == "ssl" ? ("handshake", "Handshake") : ("connect", "Connect");
        Console.WriteLine();
        Console.WriteLine($"Errors: {Errors}");
        Console.WriteLine();
        Console.WriteLine($"Total time: {Report.FormatSeconds(TotalSeconds)}");
        Console.WriteLine($"Total {noun}s: {Handshakes}");
        Console.WriteLine(string.Create(c, $"{title} throughput: {HandshakesPerSecond:F0} {noun}s/s"));
        if (HandshakeSeconds > 0)
            Console.WriteLine($"{title} time: {Report.FormatNanoseconds(MeanNanoseconds)} (mean, connect to {(Protocol == "ssl" ? "handshake done" : "connected")})");
        Console.WriteLine(string.Create(c, $"Allocated: {AllocatedBytesPerHandshake:F0} B/{noun} ({Report.FormatBytes(AllocatedBytes)} in this process, {Role})"));
        if (!json)
            return;
        Console.WriteLine(JsonSerializer.Serialize(new
        {
            protocol = Protocol,
            scenario = "handshake",
            role = Role,
            address = Address,
            clients = Clients,
            seconds = Seconds,
            errors = Errors,
            totalSeconds = Math.Round(TotalSeconds, 3),
            handshakes = Handshakes,
            handshakesPerSecond = Math.Round(HandshakesPerSecond),
            handshakeNs = Math.Round(MeanNanoseconds),
            allocatedBytes = AllocatedBytes,
            allocatedBytesPerHandshake = Math.Round(AllocatedBytesPerHandshake, 1),
        }));
    }
}
