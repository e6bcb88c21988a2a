using NetServer.Diagnostics;

namespace NetServer;

/// <summary>The server's side of the diagnostics: its metric tags, its place among the observed servers, its events.</summary>
public abstract partial class StreamServer<TSession> : IObservedServer
{
    private EndpointTags? _metricTags;
    private PaddedCounter _wsMessagesReceived;
    private PaddedCounter _messagesReceived;
    private PaddedCounter _wsMessagesSent;
    private PaddedCounter _messagesSent;

    /// <summary>The endpoint tags of its metrics and of its sessions' metrics (worked out at start).</summary>
    EndpointTags? ISessionHost.MetricTags => _metricTags;

    EndpointTags? IObservedServer.MetricTags => _metricTags;

    bool IObservedServer.TryGetDatagrams(out long sent, out long received, out long dropped)
    {
        sent = received = dropped = 0;
        return false;
    }

    long IObservedServer.MessagesReceived(int kind) => kind == MessageMetrics.WebSocket ? _wsMessagesReceived.Read() : _messagesReceived.Read();

    long IObservedServer.MessagesSent(int kind) => kind == MessageMetrics.WebSocket ? _wsMessagesSent.Read() : _messagesSent.Read();

    /// <summary>Started and bound: tags from the bound endpoint, observed from now, Listening.</summary>
    private void DiagnoseStarted()
    {
        _metricTags = EndpointTags.For(Endpoint, datagrams: false);
        _wsMessagesReceived.Reset();
        _messagesReceived.Reset();
        _wsMessagesSent.Reset();
        _messagesSent.Reset();
        ObservedServers.Add(this);
        ListenerEvents.Listening(EventListener, this, Endpoint);
    }

    /// <summary>Stopped: observed no more (a stopped server is not kept alive by the meter), Stopped.</summary>
    private void DiagnoseStopped()
    {
        ObservedServers.Remove(this);
        ListenerEvents.Stopped(EventListener, this, Endpoint);
    }

    /// <summary>A connection refused at the session limit.</summary>
    private void DiagnoseRefused(Socket socket, long limit)
    {
        ConnectionMetrics.Rejected(_metricTags);
        ListenerEvents.AcceptRefused(EventListener, this, socket, limit);
    }
}
