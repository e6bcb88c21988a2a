using System;
using System.Buffers;
using System.Net.WebSockets;
using System.Threading.Tasks;
using Microsoft.AspNetCore.Http;

namespace KestrelReference;

/// <summary>/ws: every message sent back with its type (text or binary), frame by frame as it arrives.</summary>
internal static class WebSocketEcho
{
    private const int BufferSize = 64 * 1024;

    public static async Task RunAsync(HttpContext context, TrafficStats stats)
    {
        if (!context.WebSockets.IsWebSocketRequest)
        {
            context.Response.StatusCode = StatusCodes.Status400BadRequest;
            return;
        }

        using var socket = await context.WebSockets.AcceptWebSocketAsync();
        var aborted = context.RequestAborted;
        var buffer = ArrayPool<byte>.Shared.Rent(BufferSize);
        try
        {
            while (true)
            {
                var received = await socket.ReceiveAsync(buffer.AsMemory(), aborted);
                if (received.MessageType == WebSocketMessageType.Close)
                {
                    // Answer the peer's close with its own status; 1005 (none given) goes back as an empty close.
                    await socket.CloseOutputAsync(socket.CloseStatus ?? WebSocketCloseStatus.Empty, socket.CloseStatusDescription, aborted);
                    return;
                }

                await socket.SendAsync(buffer.AsMemory(0, received.Count), received.MessageType, received.EndOfMessage, aborted);
                if (received.EndOfMessage)
                    stats.CountMessage();
            }
        }
        catch (Exception e) when (e is WebSocketException or OperationCanceledException)
        {
            // A benchmark client that stops drops its connections without a close handshake: the usual end here.
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }
}
