using System;
using System.Collections.Generic;
using System.Collections.Concurrent;
using System.Diagnostics.Metrics;
using System.Linq;

namespace NetServer.Tests.Diagnostics;

/// <summary>Records the "NetServer" meter's measurements; MeterListener is process-wide, so tests filter by their server's port tag.</summary>
internal sealed class MetricRecorder : IDisposable
{
    private readonly MeterListener _listener = new();

    public MetricRecorder()
    {
        _listener.InstrumentPublished = (instrument, listener) =>
        {
            if (instrument.Meter.Name == "NetServer")
                listener.EnableMeasurementEvents(instrument);
        };
        _listener.SetMeasurementEventCallback<long>((instrument, value, tags, _) => Add(instrument.Name, value, tags));
        _listener.SetMeasurementEventCallback<double>((instrument, value, tags, _) => Add(instrument.Name, value, tags));
        _listener.Start();
    }

    public ConcurrentQueue<Recorded> Measurements { get; } = new();

    /// <summary>Asks the observable instruments for their values now.</summary>
    public void Collect() => _listener.RecordObservableInstruments();

    public IEnumerable<Recorded> For(string name, int port) =>
        Measurements.Where(m => m.Name == name && m.Tags.TryGetValue("server.port", out var p) && Equals(p, port));

    /// <summary>The last observed value of an observable instrument for <paramref name="port"/> and a direction.</summary>
    public double? Observed(string name, int port, string direction)
    {
        Measurements.Clear();
        Collect();
        return For(name, port).Where(m => Equals(m.Tags["network.io.direction"], direction)).Select(m => (double?)m.Value).LastOrDefault();
    }

    public void Dispose() => _listener.Dispose();

    private void Add(string name, double value, ReadOnlySpan<KeyValuePair<string, object?>> tags)
    {
        var copy = new Dictionary<string, object?>();
        foreach (var tag in tags)
            copy[tag.Key] = tag.Value;
        Measurements.Enqueue(new Recorded(name, value, copy));
    }

    internal sealed record Recorded(string Name, double Value, Dictionary<string, object?> Tags);
}
