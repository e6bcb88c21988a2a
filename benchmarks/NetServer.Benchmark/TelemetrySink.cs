using System;
using System.Threading;
using System.Diagnostics;
using System.Diagnostics.Metrics;

namespace NetServer.Benchmark;

/// <summary>
/// --telemetry: listens to every NetServer meter ("NetServer", "NetServer.*") and activity source
/// for the whole run, as an OpenTelemetry SDK would with metrics and traces on, so a run measures
/// what the instruments cost when someone collects them (the default run: nobody does). Each
/// measurement is added to a total; each activity is sampled with all its data.
/// </summary>
internal sealed class TelemetrySink : IDisposable
{
    private readonly MeterListener _meters = new();
    private readonly ActivityListener? _activities;
    private long _measurements;
    private long _activitiesStopped;

    public TelemetrySink(bool traces)
    {
        _meters.InstrumentPublished = (instrument, listener) =>
        {
            if (IsOurs(instrument.Meter.Name))
                listener.EnableMeasurementEvents(instrument);
        };
        _meters.SetMeasurementEventCallback<long>((_, _, _, _) => Interlocked.Increment(ref _measurements));
        _meters.SetMeasurementEventCallback<double>((_, _, _, _) => Interlocked.Increment(ref _measurements));
        _meters.Start();
        if (!traces)
            return;
        _activities = new ActivityListener
        {
            ShouldListenTo = source => IsOurs(source.Name),
            Sample = (ref ActivityCreationOptions<ActivityContext> _) => ActivitySamplingResult.AllDataAndRecorded,
            ActivityStopped = _ => Interlocked.Increment(ref _activitiesStopped),
        };
        ActivitySource.AddActivityListener(_activities);
    }

    public void Print()
    {
        _meters.RecordObservableInstruments();
        Console.WriteLine($"Telemetry: {Interlocked.Read(ref _measurements)} measurements, {Interlocked.Read(ref _activitiesStopped)} activities");
    }

    public void Dispose()
    {
        _meters.Dispose();
        _activities?.Dispose();
    }

    private static bool IsOurs(string name) => name == "NetServer" || name.StartsWith("NetServer.", StringComparison.Ordinal);
}
