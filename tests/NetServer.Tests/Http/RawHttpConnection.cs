using System;
using System.Globalization;
using System.IO;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Http;

/// <summary>One response as it came over the wire: the head's text and the body's bytes.</summary>
internal sealed record RawResponse(string Head, byte[] Body)
{
    public int Status => int.Parse(Head.AsSpan(9, 3), NumberStyles.None, CultureInfo.InvariantCulture);

    public string BodyText => Encoding.ASCII.GetString(Body);

    public bool Says(string field) => Head.Contains("\r\n" + field + "\r\n", StringComparison.OrdinalIgnoreCase);
}

/// <summary>
/// A plain socket speaking HTTP/1.1 byte by byte as the test writes it, reading responses with a
/// framing reader of its own (Content-Length, chunked, none after HEAD or with 1xx/204/304), so
/// the server is checked against bytes, not against our client.
/// </summary>
internal sealed class RawHttpConnection : IDisposable
{
    private readonly Socket _socket;
    private readonly byte[] _buffer = new byte[64 * 1024];
    private readonly MemoryStream _pending = new(); // received and not yet taken
    private bool _closed;

    private RawHttpConnection(Socket socket) => _socket = socket;

    public static async Task<RawHttpConnection> ConnectAsync(int port)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        await socket.ConnectAsync(IPAddress.Loopback, port).WaitAsync(Wait.Default);
        return new RawHttpConnection(socket);
    }

    public Socket Socket => _socket;

    public Task SendAsync(string text) => SendAsync(Encoding.ASCII.GetBytes(text));

    public async Task SendAsync(byte[] bytes)
    {
        var sent = 0;
        while (sent < bytes.Length)
            sent += await _socket.SendAsync(bytes.AsMemory(sent), SocketFlags.None).AsTask().WaitAsync(Wait.Default);
    }

    /// <summary>Sends one byte per send call (NoDelay is on: each goes out as its own segment, mostly).</summary>
    public async Task SendByteByByteAsync(string text)
    {
        foreach (var b in Encoding.ASCII.GetBytes(text))
            await SendAsync([b]);
    }

    /// <summary>Reads one whole response; <paramref name="afterHead"/>: it answers a HEAD request (no body follows).</summary>
    public async Task<RawResponse> ReadResponseAsync(bool afterHead = false, TimeSpan? timeout = null)
    {
        using var cts = new CancellationTokenSource(timeout ?? Wait.Default);
        var headEnd = await FillUntilAsync(data => IndexOf(data, "\r\n\r\n"u8) is var at and >= 0 ? at + 4 : -1, cts.Token);
        var head = Encoding.ASCII.GetString(Take(headEnd));
        var status = int.Parse(head.AsSpan(9, 3), NumberStyles.None, CultureInfo.InvariantCulture);
        if (afterHead || status is < 200 or 204 or 304)
            return new RawResponse(head, []);

        if (Field(head, "Content-Length") is { } length)
        {
            var size = int.Parse(length, NumberStyles.None, CultureInfo.InvariantCulture);
            await FillUntilAsync(data => data.Length >= size ? size : -1, cts.Token);
            return new RawResponse(head, Take(size));
        }

        if (Field(head, "Transfer-Encoding") is { } coding && coding.EndsWith("chunked", StringComparison.OrdinalIgnoreCase))
        {
            var body = new MemoryStream();
            while (true)
            {
                var lineEnd = await FillUntilAsync(data => IndexOf(data, "\r\n"u8) is var at and >= 0 ? at + 2 : -1, cts.Token);
                var line = Encoding.ASCII.GetString(Take(lineEnd)).TrimEnd();
                var size = int.Parse(line.Split(';')[0], NumberStyles.HexNumber, CultureInfo.InvariantCulture);
                if (size == 0)
                {
                    await FillUntilAsync(data => IndexOf(data, "\r\n"u8) == 0 ? 2 : -1, cts.Token); // no trailers expected from our server
                    Take(2);
                    return new RawResponse(head, body.ToArray());
                }

                await FillUntilAsync(data => data.Length >= size + 2 ? size + 2 : -1, cts.Token);
                body.Write(Take(size + 2), 0, size);
            }
        }

        // Until close.
        await FillUntilAsync(_ => _closed ? (int)_pending.Length : -1, cts.Token, untilClose: true);
        return new RawResponse(head, Take((int)_pending.Length));
    }

    /// <summary>Asserts the server closes the connection next, with no more bytes before the close.</summary>
    public async Task AssertClosedAsync(TimeSpan? timeout = null)
    {
        using var cts = new CancellationTokenSource(timeout ?? Wait.Default);
        while (!_closed)
            await ReceiveAsync(cts.Token);
        Assert.True(_pending.Length == 0, "Bytes arrived before the close: " + Encoding.ASCII.GetString(_pending.ToArray()));
    }

    /// <summary>True when nothing arrives and the connection stays open for <paramref name="quiet"/>.</summary>
    public async Task<bool> StaysOpenAsync(TimeSpan quiet)
    {
        using var cts = new CancellationTokenSource(quiet);
        try
        {
            await ReceiveAsync(cts.Token);
            return false;
        }
        catch (OperationCanceledException)
        {
            return _pending.Length == 0 && !_closed;
        }
    }

    public void Dispose()
    {
        _socket.Dispose();
        _pending.Dispose();
    }

    private static string? Field(string head, string name)
    {
        foreach (var line in head.Split("\r\n"))
        {
            var colon = line.IndexOf(':');
            if (colon > 0 && line.AsSpan(0, colon).Equals(name, StringComparison.OrdinalIgnoreCase))
                return line[(colon + 1)..].Trim();
        }

        return null;
    }

    private static int IndexOf(ReadOnlySpan<byte> data, ReadOnlySpan<byte> value) => data.IndexOf(value);

    private delegate int Framer(ReadOnlySpan<byte> data);

    /// <summary>Receives until <paramref name="framer"/> finds its end in the pending bytes; returns where it ends.</summary>
    private async Task<int> FillUntilAsync(Framer framer, CancellationToken token, bool untilClose = false)
    {
        while (true)
        {
            var end = framer(new ReadOnlySpan<byte>(_pending.GetBuffer(), 0, (int)_pending.Length));
            if (end >= 0)
                return end;
            if (_closed)
            {
                Assert.Fail("The connection closed in the middle of a response: " + Encoding.ASCII.GetString(_pending.ToArray()));
            }

            await ReceiveAsync(token);
            if (untilClose && _closed)
                return (int)_pending.Length;
        }
    }

    private async Task ReceiveAsync(CancellationToken token)
    {
        int read;
        try
        {
            read = await _socket.ReceiveAsync(_buffer, SocketFlags.None, token);
        }
        catch (SocketException e) when (e.SocketErrorCode == SocketError.ConnectionReset)
        {
            read = 0; // a close with unread bytes in the server's buffer arrives as a reset
        }

        if (read == 0)
            _closed = true;
        else
            _pending.Write(_buffer, 0, read);
    }

    private byte[] Take(int count)
    {
        var all = _pending.ToArray();
        var taken = all.AsSpan(0, count).ToArray();
        _pending.SetLength(0);
        _pending.Write(all, count, all.Length - count);
        return taken;
    }
}
