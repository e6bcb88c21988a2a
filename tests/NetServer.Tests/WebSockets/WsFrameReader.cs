using System;
using System.Net.Sockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using Xunit;

namespace NetServer.Tests.WebSockets;

/// <summary>
/// Reads what a WebSocket peer sends on a raw socket: an HTTP head, then frames, then the end of
/// the connection. Every read is bounded by a timeout, so a peer that sends nothing fails the test
/// instead of hanging it. Used by the raw test client (reading our server) and the fake server
/// (reading our client).
/// </summary>
internal sealed class WsFrameReader(Socket socket)
{
    public static readonly TimeSpan DefaultTimeout = TimeSpan.FromSeconds(10);

    private byte[] _buffer = new byte[64 * 1024];
    private int _start;
    private int _end;

    /// <summary>The peer ended the connection: a FIN, or (<see cref="EndedByReset"/>) a reset.</summary>
    public bool Ended { get; private set; }

    public bool EndedByReset { get; private set; }

    /// <summary>Bytes received and not yet taken.</summary>
    public int Buffered => _end - _start;

    /// <summary>Reads an HTTP head up to its blank line; bytes after it stay for the frames.</summary>
    public async Task<string> ReadHeadAsync(TimeSpan? timeout = null)
    {
        using var cts = new CancellationTokenSource(timeout ?? DefaultTimeout);
        while (true)
        {
            var at = _buffer.AsSpan(_start, _end - _start).IndexOf("\r\n\r\n"u8);
            if (at >= 0)
            {
                var head = Encoding.ASCII.GetString(_buffer, _start, at + 4);
                _start += at + 4;
                return head;
            }

            if (!await FillAsync("an HTTP head", cts.Token))
                Assert.Fail($"The connection ended before a whole HTTP head arrived: \"{Encoding.ASCII.GetString(_buffer, _start, _end - _start)}\"");
        }
    }

    /// <summary>Reads exactly <paramref name="count"/> bytes (an HTTP body after its head).</summary>
    public async Task<byte[]> ReadBytesAsync(int count, TimeSpan? timeout = null)
    {
        using var cts = new CancellationTokenSource(timeout ?? DefaultTimeout);
        while (_end - _start < count)
        {
            if (!await FillAsync($"{count} bytes", cts.Token))
                Assert.Fail($"The connection ended after {_end - _start} of {count} bytes.");
        }

        var bytes = _buffer.AsSpan(_start, count).ToArray();
        _start += count;
        return bytes;
    }

    /// <summary>The next frame, or null when the connection ended (cleanly between frames).</summary>
    public async Task<WsWireFrame?> ReadFrameAsync(TimeSpan? timeout = null)
    {
        using var cts = new CancellationTokenSource(timeout ?? DefaultTimeout);
        while (true)
        {
            var frame = WsWire.TryParse(_buffer.AsSpan(_start, _end - _start), out var consumed);
            if (frame is not null)
            {
                _start += consumed;
                return frame;
            }

            if (!await FillAsync("a frame", cts.Token))
            {
                Assert.True(_start == _end, $"The connection ended inside a frame ({_end - _start} bytes of it arrived).");
                return null;
            }
        }
    }

    /// <summary>Reads until the connection ends; fails when it does not within the timeout.</summary>
    public async Task<byte[]> ReadToEndAsync(TimeSpan? timeout = null)
    {
        using var cts = new CancellationTokenSource(timeout ?? DefaultTimeout);
        while (await FillAsync("the end of the connection", cts.Token))
        {
        }

        var rest = _buffer.AsSpan(_start, _end - _start).ToArray();
        _start = _end;
        return rest;
    }

    private async Task<bool> FillAsync(string what, CancellationToken cancellationToken)
    {
        if (Ended)
            return false;
        if (_end == _buffer.Length)
        {
            if (_start > 0)
            {
                _buffer.AsSpan(_start, _end - _start).CopyTo(_buffer);
                _end -= _start;
                _start = 0;
            }
            else
            {
                Array.Resize(ref _buffer, _buffer.Length * 2);
            }
        }

        int read;
        try
        {
            read = await socket.ReceiveAsync(_buffer.AsMemory(_end), SocketFlags.None, cancellationToken);
        }
        catch (OperationCanceledException)
        {
            Assert.Fail($"Timed out waiting for {what} ({_end - _start} bytes pending).");
            throw;
        }
        catch (SocketException e) when (e.SocketErrorCode is SocketError.ConnectionReset or SocketError.ConnectionAborted)
        {
            Ended = true;
            EndedByReset = true;
            return false;
        }

        if (read == 0)
        {
            Ended = true;
            return false;
        }

        _end += read;
        return true;
    }
}
