using System;
using System.Diagnostics;
using System.Diagnostics.Metrics;

namespace NetServer.Protobuf.Diagnostics;

/// <summary>
/// The protobuf package's meter and activity source, both named <see cref="Name"/>: awaited
/// requests (<c>ProtoSession.RequestAsync</c>, <c>ProtoClient.RequestAsync</c>) measured from the
/// send to the reply, timeout, cancellation, failed send or the connection's end. With nobody
/// listening a request costs two <c>Enabled</c> checks and a <c>HasListeners</c> call and records
/// nothing.
/// </summary>
internal static class ProtoTelemetry
{
    /// <summary>The meter's and the activity source's name ("NetServer.Protobuf"); <c>AddMeter("NetServer.*")</c> takes it too.</summary>
    public const string Name = "NetServer.Protobuf";

    public const string Ok = "ok";
    public const string TimedOut = "timeout";
    public const string Canceled = "canceled";
    public const string Disconnected = "disconnected";
    public const string Failed = "failed";

    private static readonly string? s_version = typeof(ProtoTelemetry).Assembly.GetName().Version?.ToString();

    public static readonly Meter Meter = new(Name, s_version);

    public static readonly ActivitySource ActivitySource = new(Name, s_version);

    private static readonly Histogram<double> s_duration = Meter.CreateHistogram<double>(
        "netserver.proto.request.duration", "s", "Duration of awaited protobuf requests, from the send to the reply or the failure.");

    private static readonly UpDownCounter<long> s_active = Meter.CreateUpDownCounter<long>(
        "netserver.proto.active_requests", "{request}", "Protobuf requests awaiting their reply.");

    private static readonly Counter<long> s_timeouts = Meter.CreateCounter<long>(
        "netserver.proto.request.timeouts", "{request}", "Protobuf requests that got no reply within their timeout.");

    /// <summary>A request was registered: what it needs to be measured at its end (default: nobody listens).</summary>
    public static RequestMark Start(ulong id)
    {
        var metrics = s_duration.Enabled || s_active.Enabled || s_timeouts.Enabled;
        var tracing = ActivitySource.HasListeners();
        if (!metrics && !tracing)
            return default;
        if (s_active.Enabled)
            s_active.Add(1);
        Activity? activity = null;
        if (tracing)
        {
            // Not left current: the caller's own activity stays current on its thread.
            var previous = Activity.Current;
            activity = ActivitySource.StartActivity("proto request", ActivityKind.Client);
            Activity.Current = previous;
            if (activity is { IsAllDataRequested: true })
                activity.SetTag("netserver.proto.request_id", (long)id);
        }

        return new RequestMark(Stopwatch.GetTimestamp(), activity, s_active.Enabled);
    }

    /// <summary>
    /// The request ended with <paramref name="outcome"/>: <see cref="Ok"/>, <see cref="TimedOut"/>,
    /// <see cref="Canceled"/>, <see cref="Disconnected"/> (the connection ended first) or
    /// <see cref="Failed"/> (not sent); <paramref name="error"/> is what the caller's task failed with.
    /// </summary>
    public static void End(in RequestMark mark, string outcome, Exception? error)
    {
        if (mark.Started == 0)
            return;
        if (mark.CountedActive)
            s_active.Add(-1);
        if (ReferenceEquals(outcome, TimedOut))
            s_timeouts.Add(1);
        if (s_duration.Enabled)
        {
            var tags = new TagList { { "netserver.proto.outcome", outcome } };
            if (error is not null)
                tags.Add("error.type", outcome);
            s_duration.Record((Stopwatch.GetTimestamp() - mark.Started) / (double)Stopwatch.Frequency, tags);
        }

        if (mark.Activity is { } activity)
        {
            activity.SetTag("netserver.proto.outcome", outcome);
            if (error is not null)
            {
                activity.SetTag("error.type", outcome);
                activity.SetStatus(ActivityStatusCode.Error, error.Message);
            }

            var current = Activity.Current;
            activity.Stop();
            Activity.Current = current; // Stop makes the activity's parent current on this thread
        }
    }
}

/// <summary>A measured request's start: its timestamp (0: not measured) and activity.</summary>
internal readonly struct RequestMark(long started, Activity? activity, bool countedActive)
{
    public long Started { get; } = started;

    public Activity? Activity { get; } = activity;

    public bool CountedActive { get; } = countedActive;
}
