using System;
using System.Net.Sockets;
using System.Text;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.WebSockets;

/// <summary>
/// A WebSocket client written by hand over a raw socket, to drive the server with exactly the
/// bytes a test chooses: the upgrade request as text, frames built by <see cref="WsWire"/> (any
/// bits, masked or not), sent whole or cut into chunks of any size, each its own send. It reads
/// back frames, the close frame and the end of the connection, every wait bounded.
/// </summary>
internal sealed class WsRawClient(Socket socket) : IDisposable
{
    public Socket Socket { get; } = socket;

    public WsFrameReader Reader { get; } = new(socket);

    /// <summary>The upgrade request: <paramref name="fields"/> are CRLF-terminated lines added to the usual ones.</summary>
    public static string Request(string fields = "", string key = WsWire.SampleKey) =>
        "GET /chat HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
        $"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n{fields}\r\n";

    /// <summary>Sends the upgrade request (and <paramref name="after"/> in the same send) and returns the answer's head.</summary>
    public async Task<string> UpgradeAsync(string fields = "", byte[]? after = null)
    {
        await SendAsync(WsWire.Concat(Encoding.ASCII.GetBytes(Request(fields)), after ?? []));
        return await Reader.ReadHeadAsync();
    }

    /// <summary>Sends <paramref name="bytes"/> whole, or in <paramref name="chunk"/>-byte pieces, one send each (NoDelay: mostly one segment each).</summary>
    public async Task SendAsync(byte[] bytes, int chunk = 0)
    {
        if (chunk <= 0)
            chunk = bytes.Length;
        for (var at = 0; at < bytes.Length; at += chunk)
        {
            var part = bytes.AsMemory(at, Math.Min(chunk, bytes.Length - at));
            while (!part.IsEmpty)
            {
                var sent = await Socket.SendAsync(part, SocketFlags.None).AsTask().WaitAsync(Wait.Default);
                part = part.Slice(sent);
            }
        }
    }

    /// <summary>Sends the frames concatenated, in one send (or <paramref name="chunk"/>-byte pieces).</summary>
    public Task SendFramesAsync(int chunk, params byte[][] frames) => SendAsync(WsWire.Concat(frames), chunk);

    public Task<WsWireFrame?> ReadFrameAsync(TimeSpan? timeout = null) => Reader.ReadFrameAsync(timeout);

    /// <summary>Reads the next frame, which must be a whole server frame (FIN, no RSV bits, not masked) with this opcode and payload.</summary>
    public async Task<WsWireFrame> ExpectMessageAsync(int opcode, byte[] payload, TimeSpan? timeout = null)
    {
        var frame = await ReadFrameAsync(timeout);
        Assert.True(frame is not null, $"The connection ended instead of a {payload.Length}-byte frame of opcode {opcode}.");
        Assert.True(frame.Opcode == opcode, $"Expected opcode {opcode} ({payload.Length} bytes), got {frame}" + (frame.Opcode == WsWire.Close ? $" \"{frame.CloseReason}\"" : string.Empty));
        Assert.True(frame.Fin, $"A server message came fragmented: {frame}");
        Assert.False(frame.Masked, "A server frame is masked (RFC 6455 5.1 forbids it).");
        Assert.Equal(0, frame.Rsv);
        AssertBytes(payload, frame.Payload);
        return frame;
    }

    /// <summary>
    /// The close frame must come next (no data frame before it), with <paramref name="code"/>
    /// (-1: none), a reason of at most 123 bytes of valid UTF-8, and then the server closes the
    /// connection without waiting for anything else.
    /// </summary>
    public async Task<WsWireFrame> ExpectCloseAsync(int code, TimeSpan? timeout = null)
    {
        var frame = await ReadFrameAsync(timeout);
        Assert.True(frame is not null, $"The connection ended without a close frame (expected {code}).");
        Assert.True(frame.Opcode == WsWire.Close, $"Expected a close frame with {code}, got {frame}.");
        Assert.True(frame.Fin && !frame.Masked && frame.Rsv == 0, $"A malformed close frame: {frame}");
        Assert.True(frame.CloseCode == code, $"Expected close code {code}, got {frame.CloseCode} \"{(frame.Payload.Length > 2 ? Encoding.UTF8.GetString(frame.Payload, 2, frame.Payload.Length - 2) : string.Empty)}\".");
        Assert.True(frame.Payload.Length <= 125, "A close frame over 125 bytes.");
        _ = frame.CloseReason; // strict UTF-8: throws when the reason is not valid
        await ExpectEndAsync(timeout);
        return frame;
    }

    /// <summary>The server closes the TCP connection next, with nothing more sent; then this side ends too, as a client does.</summary>
    public async Task ExpectEndAsync(TimeSpan? timeout = null)
    {
        var rest = await Reader.ReadToEndAsync(timeout);
        Assert.True(rest.Length == 0, $"{rest.Length} more bytes came before the connection closed: {(WsWire.TryParse(rest, out _) is { } next ? next.ToString() : "a partial frame")}");
        try
        {
            Socket.Shutdown(SocketShutdown.Send);
        }
        catch (SocketException)
        {
            // Reset by the server already: nothing to end.
        }
    }

    /// <summary>Compares bytes without printing megabytes when they differ.</summary>
    public static void AssertBytes(byte[] expected, byte[] actual)
    {
        if (expected.Length < 256 && actual.Length < 256)
        {
            Assert.Equal(expected, actual);
            return;
        }

        Assert.True(expected.Length == actual.Length, $"Expected {expected.Length} bytes, got {actual.Length}.");
        var differs = expected.AsSpan().CommonPrefixLength(actual);
        Assert.True(differs == expected.Length, $"The bytes differ from index {differs}.");
    }

    public void Dispose() => Socket.Dispose();
}
