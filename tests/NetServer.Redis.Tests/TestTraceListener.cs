using System;
using System.Collections.Concurrent;
using System.Diagnostics;

namespace NetServer.Redis.Tests;

/// <summary>
/// A trace listener for one test: it keeps the messages <c>match</c> takes, and throws on them when
/// <c>throws</c> (a listener with a bug, or one whose sink is gone). Added to <see cref="Trace.Listeners"/>
/// on construction, removed on dispose.
/// </summary>
internal sealed class TestTraceListener : TraceListener
{
    private readonly Func<string, bool> _match;
    private readonly bool _throws;

    public TestTraceListener(Func<string, bool> match, bool throws = false)
    {
        _match = match;
        _throws = throws;
        Trace.Listeners.Add(this);
    }

    public ConcurrentQueue<string> Messages { get; } = new();

    public override void TraceEvent(TraceEventCache? eventCache, string source, TraceEventType eventType, int id, string? format, params object?[]? args) =>
        Take(args is null || format is null ? format : string.Format(System.Globalization.CultureInfo.InvariantCulture, format, args));

    public override void TraceEvent(TraceEventCache? eventCache, string source, TraceEventType eventType, int id, string? message) => Take(message);

    public override void Write(string? message) => Take(message);

    public override void WriteLine(string? message) => Take(message);

    private void Take(string? message)
    {
        if (message is null || !_match(message))
            return;
        Messages.Enqueue(message);
        if (_throws)
            throw new InvalidOperationException("a trace listener that throws (test)");
    }

    protected override void Dispose(bool disposing)
    {
        Trace.Listeners.Remove(this);
        base.Dispose(disposing);
    }
}
