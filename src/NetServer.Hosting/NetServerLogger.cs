using System;
using System.Net;
using System.Net.Sockets;
using Microsoft.Extensions.Logging;
using NetServer.Diagnostics;

namespace NetServer.Hosting;

/// <summary>
/// Writes a server's <see cref="NetServerEventListener"/> events to an <see cref="ILogger"/> with
/// stable event ids (see <see cref="NetServerLogEvents"/>). Each message is a source-generated
/// <see cref="LoggerMessageAttribute"/> method, which checks <see cref="ILogger.IsEnabled"/> first:
/// a disabled level costs a call and a check, and allocates nothing.
/// </summary>
/// <param name="logger">Where to write.</param>
/// <param name="serverName">The name written with every event (the registration name when hosted).</param>
public sealed partial class NetServerLogger(ILogger logger, string serverName) : NetServerEventListener
{
    /// <inheritdoc/>
    public override void Listening(object source, EndPoint endpoint) => LogListening(logger, serverName, endpoint);

    /// <inheritdoc/>
    public override void Stopped(object source, EndPoint endpoint) => LogStopped(logger, serverName, endpoint);

    /// <inheritdoc/>
    public override void AcceptRefused(object source, EndPoint? remote, long sessionLimit) =>
        LogAcceptRefused(logger, serverName, remote, sessionLimit);

    /// <inheritdoc/>
    public override void ConnectionClosed(object source, Guid id, EndPoint? remote, DisconnectReason reason, SocketError error) =>
        LogConnectionClosed(logger, serverName, id, remote, reason, error);

    /// <inheritdoc/>
    public override void ProtocolError(object source, Guid id, EndPoint? remote, string protocol, string error) =>
        LogProtocolError(logger, serverName, id, remote, protocol, error);

    /// <inheritdoc/>
    public override void TlsHandshakeFailed(object source, Guid id, EndPoint? remote, string error) =>
        LogTlsHandshakeFailed(logger, serverName, id, remote, error);

    /// <inheritdoc/>
    public override void SendPaused(object source, Guid id, EndPoint? remote, long bytesPending) =>
        LogSendPaused(logger, serverName, id, remote, bytesPending);

    /// <inheritdoc/>
    public override void MulticastDisconnect(object source, Guid id, EndPoint? remote, long bytesPending) =>
        LogMulticastDisconnect(logger, serverName, id, remote, bytesPending);

    [LoggerMessage(EventId = NetServerLogEvents.Listening, EventName = nameof(NetServerLogEvents.Listening), Level = LogLevel.Information,
        Message = "{Server} listening on {Endpoint}")]
    private static partial void LogListening(ILogger logger, string server, EndPoint endpoint);

    [LoggerMessage(EventId = NetServerLogEvents.Stopped, EventName = nameof(NetServerLogEvents.Stopped), Level = LogLevel.Information,
        Message = "{Server} stopped listening on {Endpoint}")]
    private static partial void LogStopped(ILogger logger, string server, EndPoint endpoint);

    [LoggerMessage(EventId = NetServerLogEvents.AcceptRefused, EventName = nameof(NetServerLogEvents.AcceptRefused), Level = LogLevel.Warning,
        Message = "{Server} refused a connection from {Remote}: session limit {SessionLimit} reached")]
    private static partial void LogAcceptRefused(ILogger logger, string server, EndPoint? remote, long sessionLimit);

    [LoggerMessage(EventId = NetServerLogEvents.ConnectionClosed, EventName = nameof(NetServerLogEvents.ConnectionClosed), Level = LogLevel.Debug,
        Message = "{Server} connection {ConnectionId} from {Remote} closed: {Reason} (socket error {SocketError})")]
    private static partial void LogConnectionClosed(ILogger logger, string server, Guid connectionId, EndPoint? remote, DisconnectReason reason, SocketError socketError);

    [LoggerMessage(EventId = NetServerLogEvents.ProtocolError, EventName = nameof(NetServerLogEvents.ProtocolError), Level = LogLevel.Warning,
        Message = "{Server} connection {ConnectionId} from {Remote} broke the {Protocol} protocol: {Error}")]
    private static partial void LogProtocolError(ILogger logger, string server, Guid connectionId, EndPoint? remote, string protocol, string error);

    [LoggerMessage(EventId = NetServerLogEvents.TlsHandshakeFailed, EventName = nameof(NetServerLogEvents.TlsHandshakeFailed), Level = LogLevel.Warning,
        Message = "{Server} connection {ConnectionId} from {Remote}: TLS handshake failed: {Error}")]
    private static partial void LogTlsHandshakeFailed(ILogger logger, string server, Guid connectionId, EndPoint? remote, string error);

    [LoggerMessage(EventId = NetServerLogEvents.SendPaused, EventName = nameof(NetServerLogEvents.SendPaused), Level = LogLevel.Debug,
        Message = "{Server} connection {ConnectionId} from {Remote} reads slowly: sending paused with {BytesPending} bytes queued")]
    private static partial void LogSendPaused(ILogger logger, string server, Guid connectionId, EndPoint? remote, long bytesPending);

    [LoggerMessage(EventId = NetServerLogEvents.MulticastDisconnect, EventName = nameof(NetServerLogEvents.MulticastDisconnect), Level = LogLevel.Warning,
        Message = "{Server} disconnected {ConnectionId} from {Remote}: a multicast did not fit its send limit ({BytesPending} bytes queued)")]
    private static partial void LogMulticastDisconnect(ILogger logger, string server, Guid connectionId, EndPoint? remote, long bytesPending);
}
