using System.Diagnostics;
using System.Diagnostics.Metrics;

namespace NetServer.Diagnostics;

/// <summary>
/// <c>netserver.messages.received</c>: whole messages handed to the application, WebSocket data
/// messages and length-prefixed byte messages (protobuf envelopes travel as byte messages), tagged
/// with <c>netserver.protocol</c> and the server's endpoint. One <c>Enabled</c> check per message
/// when nobody listens.
/// </summary>
internal static class MessageMetrics
{
    public const string WebSocket = "websocket";
    public const string Messages = "messages";

    private static readonly Counter<long> s_received = NetServerTelemetry.Meter.CreateCounter<long>(
        "netserver.messages.received", "{message}", "Whole messages delivered to the application (WebSocket data messages, length-prefixed byte messages).");

    public static void Received(StreamConnection? owner, string protocol)
    {
        if (!s_received.Enabled)
            return;
        var tags = new TagList { { "netserver.protocol", protocol } };
        owner?.MetricTags?.AddTo(ref tags);
        s_received.Add(1, tags);
    }
}
