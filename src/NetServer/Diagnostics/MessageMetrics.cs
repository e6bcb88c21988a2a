namespace NetServer.Diagnostics;

/// <summary>
/// The kinds of message <c>netserver.messages.received</c> counts, tagged <c>netserver.protocol</c>:
/// whole WebSocket data messages and length-prefixed byte messages (protobuf envelopes travel as
/// byte messages). A protocol adds the messages of one read at once to its session's server
/// (<see cref="Streams.ISessionHost.CountMessagesReceived"/>); the instrument reads the server's
/// totals when a collector asks, as <c>netserver.io</c> does, so collecting costs the hot path nothing.
/// </summary>
internal static class MessageMetrics
{
    public const int WebSocket = 0;
    public const int Messages = 1;
    public const int Kinds = 2;

    public static string Name(int kind) => kind == WebSocket ? "websocket" : "messages";
}
