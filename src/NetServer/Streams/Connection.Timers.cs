using System;
using System.Threading;

namespace NetServer.Streams;

/// <summary>The connection's deadlines: the graceful close's linger limit and the idle timeout.</summary>
internal sealed partial class Connection
{
    private static readonly TimerCallback s_lingerExpired = static state => ((Connection)state!).LingerExpired();

    private Timer? _lingerTimer;

    private long _lastActivity;

    private void StartIdleTimer() => _lastActivity = 0;

    private void StartLingerTimer(TimeSpan timeout) =>
        Interlocked.CompareExchange(ref _lingerTimer, new Timer(s_lingerExpired, this, timeout, Timeout.InfiniteTimeSpan), null);

    private void NoteActivity() => _lastActivity++;

    private void StopTimers() => _lingerTimer?.Dispose();
}
