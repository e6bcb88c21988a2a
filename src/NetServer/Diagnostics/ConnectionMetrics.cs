using System.Diagnostics;
using System.Diagnostics.Metrics;

namespace NetServer.Diagnostics;

/// <summary>
/// The per-connection instruments of the core (modelled on Kestrel's KestrelMetrics), created once.
/// They record once per connection, handshake or pause, never per message, and only while some
/// listener enables them: with nobody listening a record costs an <c>Enabled</c> check and builds
/// no tags. Byte and datagram totals are observable instruments instead (<see cref="ObservedServers"/>).
/// </summary>
internal static class ConnectionMetrics
{
    private static readonly UpDownCounter<long> s_active = NetServerTelemetry.Meter.CreateUpDownCounter<long>(
        "netserver.active_connections", "{connection}", "Connections open right now (server sessions and clients).");

    private static readonly Histogram<double> s_duration = NetServerTelemetry.Meter.CreateHistogram<double>(
        "netserver.connection.duration", "s", "How long connections lasted, tagged with why they ended.");

    private static readonly Counter<long> s_rejected = NetServerTelemetry.Meter.CreateCounter<long>(
        "netserver.rejected_connections", "{connection}", "Connections closed at accept because the server had OptionMaxSessions sessions.");

    private static readonly UpDownCounter<long> s_activeTls = NetServerTelemetry.Meter.CreateUpDownCounter<long>(
        "netserver.active_tls_handshakes", "{handshake}", "TLS handshakes under way.");

    private static readonly Histogram<double> s_tlsDuration = NetServerTelemetry.Meter.CreateHistogram<double>(
        "netserver.tls_handshake.duration", "s", "How long TLS handshakes took; error.type on a failure.");

    private static readonly Counter<long> s_sendPauses = NetServerTelemetry.Meter.CreateCounter<long>(
        "netserver.send.pauses", "{pause}", "Times a send queue reached its limit or high-water mark (a slow reader); at most one a second per connection.");

    /// <summary>A connection started (at attach): counted as active from now, if anyone listens.</summary>
    public static void Opened(StreamConnection owner, Connection connection)
    {
        if (!s_active.Enabled && !s_duration.Enabled)
            return;
        connection.MetricsStart = Stopwatch.GetTimestamp();
        if (s_active.Enabled)
        {
            var tags = Tags(owner);
            s_active.Add(1, tags);
        }
    }

    /// <summary>A connection finished: no longer active; its duration, with the reason it ended.</summary>
    public static void Closed(StreamConnection owner, Connection connection)
    {
        var start = connection.MetricsStart;
        if (start == 0)
            return;
        var tags = Tags(owner);
        // Counted down whether or not the listener is still there: the count went up at open.
        s_active.Add(-1, tags);
        if (!s_duration.Enabled)
            return;
        var reason = connection.Reason;
        tags.Add("netserver.disconnect.reason", ReasonName(reason));
        if (IsError(reason))
            tags.Add("error.type", ReasonName(reason));
        s_duration.Record(Seconds(start), tags);
    }

    public static void Rejected(EndpointTags? endpoint)
    {
        if (!s_rejected.Enabled)
            return;
        var tags = new TagList();
        endpoint?.AddTo(ref tags);
        s_rejected.Add(1, tags);
    }

    /// <summary>A TLS handshake starts: returns its start timestamp, 0 when nobody listens.</summary>
    public static long TlsHandshakeStarted(StreamConnection owner)
    {
        if (!s_activeTls.Enabled && !s_tlsDuration.Enabled)
            return 0;
        if (s_activeTls.Enabled)
            s_activeTls.Add(1, Tags(owner));
        return Stopwatch.GetTimestamp();
    }

    /// <summary>A TLS handshake ended: <paramref name="protocolVersion"/> ("1.3") on success, <paramref name="failure"/> otherwise.</summary>
    public static void TlsHandshakeEnded(StreamConnection owner, long start, string? protocolVersion, Exception? failure)
    {
        if (start == 0)
            return;
        var tags = Tags(owner);
        s_activeTls.Add(-1, tags);
        if (!s_tlsDuration.Enabled)
            return;
        if (failure is not null)
            tags.Add("error.type", failure is TimeoutException ? "timeout" : failure.GetType().FullName);
        else if (protocolVersion is not null)
            tags.Add("tls.protocol.version", protocolVersion);
        s_tlsDuration.Record(Seconds(start), tags);
    }

    public static void SendPaused(StreamConnection owner)
    {
        if (s_sendPauses.Enabled)
            s_sendPauses.Add(1, Tags(owner));
    }

    private static TagList Tags(StreamConnection owner)
    {
        var tags = new TagList();
        owner.MetricTags?.AddTo(ref tags);
        return tags;
    }

    private static double Seconds(long start) => (Stopwatch.GetTimestamp() - start) / (double)Stopwatch.Frequency;

    /// <summary>The reasons that are not a plain end (either side closing, a stop, a dispose) are errors.</summary>
    private static bool IsError(DisconnectReason reason) =>
        reason is not (DisconnectReason.None or DisconnectReason.LocalDisconnect or DisconnectReason.PeerClosed
            or DisconnectReason.ServerStopped or DisconnectReason.Disposed);

    // Enum.ToString allocates each time: each name is made once (the values are small and run from 0).
    private static readonly string?[] s_reasonNames = new string?[32];

    internal static string ReasonName(DisconnectReason reason)
    {
        var index = (int)reason;
        return index >= 0 && index < s_reasonNames.Length ? s_reasonNames[index] ??= reason.ToString() : reason.ToString();
    }
}
