using System;
using System.Collections.Concurrent;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using Microsoft.Extensions.Logging;

namespace NetServer.Hosting.Tests;

/// <summary>One log record as the provider saw it: category, level, event id and the formatted message.</summary>
public sealed record LogRecord(string Category, LogLevel Level, EventId EventId, string Message);

/// <summary>An <see cref="ILoggerProvider"/> that keeps every record written through the host's logger factory.</summary>
public sealed class CapturingLoggerProvider : ILoggerProvider
{
    private readonly ConcurrentQueue<LogRecord> _records = new();

    public LogRecord[] Records => _records.ToArray();

    public ILogger CreateLogger(string categoryName) => new Logger(this, categoryName);

    /// <summary>Waits (polling, bounded by <paramref name="timeout"/>) for a record with <paramref name="eventId"/>.</summary>
    public async Task<LogRecord> WaitFor(int eventId, TimeSpan timeout)
    {
        using var cancel = new CancellationTokenSource(timeout);
        while (true)
        {
            if (_records.FirstOrDefault(r => r.EventId.Id == eventId) is { } record)
                return record;
            try
            {
                await Task.Delay(10, cancel.Token);
            }
            catch (OperationCanceledException)
            {
                throw new TimeoutException($"No log event {eventId} within {timeout}; saw: {string.Join(" | ", _records.Select(r => $"{r.EventId.Id} {r.Message}"))}");
            }
        }
    }

    public void Dispose()
    {
    }

    private sealed class Logger(CapturingLoggerProvider owner, string category) : ILogger
    {
        public IDisposable? BeginScope<TState>(TState state)
            where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) => logLevel != LogLevel.None;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter) =>
            owner._records.Enqueue(new LogRecord(category, logLevel, eventId, formatter(state, exception)));
    }
}
