using System;
using System.Globalization;
using System.Text.Json;

namespace NetServer.Benchmark;

/// <summary>
/// The latency scenario's figures, as text and as one JSON line: round trips per second, their
/// times (minimum, mean, p50, p99, p99.9, maximum) and the bytes allocated per round trip.
/// </summary>
internal sealed record LatencyReport(
    string Protocol,
    string Role,
    string Address,
    int Clients,
    int Size,
    double Seconds,
    long Errors,
    double TotalSeconds,
    LatencyHistogram RoundTrips,
    long AllocatedBytes)
{
    public double RoundTripsPerSecond => TotalSeconds > 0 ? RoundTrips.Count / TotalSeconds : 0;

    public double AllocatedBytesPerRoundTrip => RoundTrips.Count > 0 ? (double)AllocatedBytes / RoundTrips.Count : 0;

    public void Print(bool json)
    {
        var c = CultureInfo.InvariantCulture;
        var (p50, p99, p999) = (RoundTrips.ValueAtQuantile(0.5), RoundTrips.ValueAtQuantile(0.99), RoundTrips.ValueAtQuantile(0.999));
        Console.WriteLine();
        Console.WriteLine($"Errors: {Errors}");
        Console.WriteLine();
        Console.WriteLine($"Total time: {Report.FormatSeconds(TotalSeconds)}");
        Console.WriteLine($"Total round trips: {RoundTrips.Count}");
        Console.WriteLine(string.Create(c, $"Round-trip throughput: {RoundTripsPerSecond:F0} round trips/s"));
        Console.WriteLine($"Round-trip time: p50 {Report.FormatNanoseconds(p50)}, p99 {Report.FormatNanoseconds(p99)}, p99.9 {Report.FormatNanoseconds(p999)}, max {Report.FormatNanoseconds(RoundTrips.Max)}");
        Console.WriteLine($"Round-trip time: min {Report.FormatNanoseconds(RoundTrips.Min)}, mean {Report.FormatNanoseconds(RoundTrips.Mean)} (percentiles: the top of their bucket, within 0.8 %)");
        Console.WriteLine(string.Create(c, $"Allocated: {AllocatedBytesPerRoundTrip:F3} B/round trip ({Report.FormatBytes(AllocatedBytes)} in this process, {Role})"));
        if (!json)
            return;
        Console.WriteLine(JsonSerializer.Serialize(new
        {
            protocol = Protocol,
            scenario = "latency",
            role = Role,
            address = Address,
            clients = Clients,
            size = Size,
            seconds = Seconds,
            errors = Errors,
            totalSeconds = Math.Round(TotalSeconds, 3),
            roundTrips = RoundTrips.Count,
            roundTripsPerSecond = Math.Round(RoundTripsPerSecond),
            minNs = RoundTrips.Min,
            meanNs = Math.Round(RoundTrips.Mean),
            p50Ns = p50,
            p99Ns = p99,
            p999Ns = p999,
            maxNs = RoundTrips.Max,
            allocatedBytes = AllocatedBytes,
            allocatedBytesPerRoundTrip = Math.Round(AllocatedBytesPerRoundTrip, 4),
        }));
    }
}
