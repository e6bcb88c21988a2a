using NetServer.Diagnostics;

namespace NetServer;

/// <summary>The UDP server's side of the diagnostics: its metric tags, its place among the observed servers, its events.</summary>
public partial class UdpServer : IObservedServer
{
    private EndpointTags? _metricTags;

    EndpointTags? IObservedServer.MetricTags => _metricTags;

    bool IObservedServer.TryGetDatagrams(out long sent, out long received, out long dropped)
    {
        sent = DatagramsSent;
        received = DatagramsReceived;
        dropped = Security?.DatagramsDropped ?? 0;
        return true;
    }

    long IObservedServer.MessagesReceived(int kind) => 0;

    long IObservedServer.MessagesSent(int kind) => 0;

    private void DiagnoseStarted()
    {
        _metricTags = EndpointTags.For(Endpoint, datagrams: true);
        ObservedServers.Add(this);
        ListenerEvents.Listening(EventListener, this, Endpoint);
    }

    private void DiagnoseStopped()
    {
        ObservedServers.Remove(this);
        ListenerEvents.Stopped(EventListener, this, Endpoint);
    }
}
