using System.Diagnostics;
using System.Diagnostics.Metrics;

namespace NetServer.Diagnostics;

/// <summary>
/// The core package's one <see cref="System.Diagnostics.Metrics.Meter"/> and one
/// <see cref="System.Diagnostics.ActivitySource"/>, both named <see cref="Name"/>. Instruments are
/// created once, next to the code that records them, from <see cref="Meter"/>; with nobody
/// listening, recording costs an <c>Enabled</c> check.
/// </summary>
internal static class NetServerTelemetry
{
    /// <summary>The name of the core's meter and activity source ("NetServer"): what <c>AddMeter</c>/<c>AddSource</c> and dotnet-counters take.</summary>
    public const string Name = "NetServer";

    private static readonly string? s_version = typeof(NetServerTelemetry).Assembly.GetName().Version?.ToString();

    /// <summary>The core's meter.</summary>
    public static readonly Meter Meter = new(Name, s_version);

    /// <summary>The core's activity source (HTTP server requests).</summary>
    public static readonly ActivitySource ActivitySource = new(Name, s_version);
}
