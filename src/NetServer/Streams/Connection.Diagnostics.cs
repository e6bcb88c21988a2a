using System.Diagnostics;
using NetServer.Diagnostics;

namespace NetServer.Streams;

/// <summary>
/// What the diagnostics need of a connection, gathered once per connection and never on the hot
/// path: the peer's address (read while the socket is open), the socket error that ended it, and
/// the metrics state of this connection (when it was counted as active).
/// </summary>
internal sealed partial class Connection
{
    private EndPoint? _peer;
    private ProxyInfo? _proxy;
    private int _socketError;          // the first SocketError that ended the connection (Success when none did)
    private long _sendPauseReported;   // Stopwatch timestamp of the last send-pause report
    internal long MetricsStart;        // Stopwatch timestamp when counted as active; 0 when not counted

    /// <summary>The peer's address, when known: read once (the runtime refuses to answer once the socket is closed).</summary>
    public EndPoint? PeerEndPoint
    {
        get
        {
            var peer = Volatile.Read(ref _peer);
            if (peer is null && !IsSocketClosed && ListenerEvents.PeerOf(_socket) is { } read)
                Volatile.Write(ref _peer, peer = read);
            return peer;
        }
    }

    /// <summary>What the PROXY header of this connection said; null when none was read.</summary>
    public ProxyInfo? Proxy => Volatile.Read(ref _proxy);

    /// <summary>
    /// Records the connection's PROXY header, before any hook runs: from now on the peer is the
    /// client it names (a LOCAL or UNKNOWN header, or a Unix one, leaves the socket's peer).
    /// </summary>
    public void SetProxy(ProxyInfo info)
    {
        if (info.Source is { } source)
            Volatile.Write(ref _peer, source);
        Volatile.Write(ref _proxy, info);
    }

    /// <summary>The socket error that ended the connection, <see cref="System.Net.Sockets.SocketError.Success"/> when none did.</summary>
    public SocketError SocketError => (SocketError)Volatile.Read(ref _socketError);

    private void RecordSocketError(SocketError error) =>
        Interlocked.CompareExchange(ref _socketError, (int)error, (int)SocketError.Success);

    /// <summary>
    /// The send queue reached its limit (a sender parks) or its high-water mark (receiving pauses):
    /// the peer reads slowly. Reported at most once a second per connection, so a peer that stays
    /// slow does not turn every send into an event.
    /// </summary>
    public void ReportSendPaused()
    {
        var now = Stopwatch.GetTimestamp();
        var last = Volatile.Read(ref _sendPauseReported);
        if ((last != 0 && now - last < Stopwatch.Frequency) || Interlocked.CompareExchange(ref _sendPauseReported, now, last) != last)
            return;
        ConnectionMetrics.SendPaused(_owner);
        ListenerEvents.SendPaused(_owner, this, BytesPending);
    }
}
