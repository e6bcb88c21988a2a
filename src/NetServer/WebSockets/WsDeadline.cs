using NetServer.Timers;

namespace NetServer.WebSockets;

/// <summary>Which of a WebSocket connection's deadlines is armed.</summary>
internal enum WsDeadlineKind
{
    None,
    KeepAlive, // nothing received for the keep-alive interval: time to ping
    Pong,      // a keep-alive ping waits for an answer
    Close,     // a close frame waits for the peer's, or a client for the server's close
}

/// <summary>
/// The one shared-clock entry of a WebSocket connection: keep-alive pings, the wait for their
/// answer, and the close handshake's wait. Re-arming allocates nothing; the work runs on the pool,
/// never on the clock's thread that serves every connection.
/// </summary>
internal sealed class WsDeadline(WebSocketProtocol owner) : TimerEntry
{
    private static readonly Action<object?> s_expired = static state => ((WsDeadline)state!).Expired();

    private volatile WsDeadlineKind _kind;

    public void ArmKeepAlive(TimeSpan interval) => Arm(WsDeadlineKind.KeepAlive, interval);

    public void ArmPong(TimeSpan timeout) => Arm(WsDeadlineKind.Pong, timeout);

    /// <summary>
    /// Bytes arrived: a keep-alive ping waiting for its answer has one, so the next ping is due an
    /// interval from now rather than when the whole pong timeout ends.
    /// </summary>
    public void Heard(TimeSpan keepAliveInterval)
    {
        if (_kind == WsDeadlineKind.Pong)
            Arm(WsDeadlineKind.KeepAlive, keepAliveInterval);
    }

    /// <summary>The close wait replaces any keep-alive deadline: a closing connection pings no more.</summary>
    public void ArmClose(TimeSpan timeout) => Arm(WsDeadlineKind.Close, timeout);

    public void Stop()
    {
        _kind = WsDeadlineKind.None;
        Disarm();
    }

    private void Arm(WsDeadlineKind kind, TimeSpan after)
    {
        if (_kind == WsDeadlineKind.Close && kind != WsDeadlineKind.Close)
            return;
        _kind = kind;
        ArmAfter(after);
    }

    protected override void OnExpired() => ThreadPoolScheduler.Schedule(s_expired, this);

    private void Expired()
    {
        var kind = _kind;
        if (kind != WsDeadlineKind.None)
            owner.OnDeadline(kind);
    }
}
