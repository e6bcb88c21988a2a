using NetServer.Timers;

namespace NetServer.Http;

/// <summary>Which of a connection's HTTP deadlines is armed.</summary>
internal enum HttpDeadlineKind
{
    None,
    KeepAlive,
    Headers,
    BodyRate,
}

/// <summary>
/// The one shared-clock entry of an HTTP server connection: the keep-alive timeout between
/// requests, the request-headers timeout from a request's first byte, and the minimum body data
/// rate while a body arrives (checked once a second after the grace period, not while the
/// application holds receiving paused). Re-arming allocates nothing.
/// </summary>
internal sealed class HttpDeadline(HttpServerProtocol owner) : TimerEntry
{
    private static readonly TimeSpan s_rateCheck = TimeSpan.FromSeconds(1);

    private volatile HttpDeadlineKind _kind;
    private double _rate;       // bytes per second the body must keep up
    private long _bodyBytes;    // body bytes received since the rate clock started
    private long _rateStart;    // when the rate clock started (timestamp), moved on while paused

    public void ArmKeepAlive(TimeSpan timeout)
    {
        _kind = HttpDeadlineKind.KeepAlive;
        if (timeout == Timeout.InfiniteTimeSpan)
            Disarm();
        else
            ArmAfter(timeout);
    }

    /// <summary>Starts the headers timeout at a request's first byte; later calls for the same head change nothing.</summary>
    public void ArmHeaders(TimeSpan timeout)
    {
        if (_kind == HttpDeadlineKind.Headers)
            return;
        _kind = HttpDeadlineKind.Headers;
        if (timeout == Timeout.InfiniteTimeSpan)
            Disarm();
        else
            ArmAfter(timeout);
    }

    public void ArmBodyRate(HttpLimits limits)
    {
        if (limits.MinRequestBodyDataRate is not { } rate)
        {
            Stop();
            return;
        }

        _kind = HttpDeadlineKind.BodyRate;
        _rate = rate;
        Interlocked.Exchange(ref _bodyBytes, 0);
        Volatile.Write(ref _rateStart, TimerWheel.Now + TimerWheel.ToTimestampDelta(limits.MinRequestBodyDataRateGracePeriod));
        ArmAfter(limits.MinRequestBodyDataRateGracePeriod + s_rateCheck);
    }

    public void CountBody(int bytes) => Interlocked.Add(ref _bodyBytes, bytes);

    /// <summary>No deadline: the application works on a request, or the connection is over.</summary>
    public void Stop()
    {
        _kind = HttpDeadlineKind.None;
        Disarm();
    }

    private static readonly Action<object?> s_expired = static state => ((HttpDeadline)state!).Expired();

    // Runs on the clock's thread, which serves every connection: the work (and the application's
    // error hook it may call) goes to the pool at once.
    protected override void OnExpired() => ThreadPoolScheduler.Schedule(s_expired, this);

    private void Expired()
    {
        var kind = _kind;
        if (kind == HttpDeadlineKind.None)
            return;
        if (kind == HttpDeadlineKind.BodyRate && KeepsUp())
        {
            ArmAfter(s_rateCheck);
            return;
        }

        owner.OnDeadline(kind);
    }

    private bool KeepsUp()
    {
        var now = TimerWheel.Now;
        if (owner.Connection is { IsReceivingPaused: true })
        {
            // The application holds the body back (backpressure): that time does not count against the peer.
            Volatile.Write(ref _rateStart, now);
            Interlocked.Exchange(ref _bodyBytes, 0);
            return true;
        }

        var seconds = TimerWheel.ToTimeSpan(now - Volatile.Read(ref _rateStart)).TotalSeconds;
        return seconds <= 0 || Interlocked.Read(ref _bodyBytes) >= _rate * seconds;
    }
}
