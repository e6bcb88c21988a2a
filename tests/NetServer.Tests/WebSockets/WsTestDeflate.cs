using System;
using System.Collections.Generic;
using System.IO;
using System.IO.Compression;

namespace NetServer.Tests.WebSockets;

/// <summary>
/// The raw client's side of permessage-deflate (RFC 7692 7.2), written with System.IO.Compression
/// only: a message is compressed with a sync flush and its 00 00 FF FF tail removed; with context
/// takeover one compressor serves every message, without it each message gets a fresh one.
/// </summary>
internal sealed class WsTestCompressor(bool takeover) : IDisposable
{
    private MemoryStream _output = new();
    private DeflateStream? _stream;

    public byte[] Compress(ReadOnlySpan<byte> message)
    {
        if (message.IsEmpty && _stream is null)
            return [0x00]; // an empty stored block's first byte (RFC 7692 7.2.3.6)
        if (!takeover || _stream is null)
        {
            _stream?.Dispose();
            _output = new MemoryStream();
            _stream = new DeflateStream(_output, CompressionLevel.Optimal, leaveOpen: true);
        }

        var start = (int)_output.Length;
        _stream.Write(message);
        _stream.Flush();
        var all = _output.GetBuffer().AsSpan(start, (int)_output.Length - start);
        if (all.IsEmpty)
            return [0x00];
        if (!all.EndsWith((ReadOnlySpan<byte>)[0x00, 0x00, 0xFF, 0xFF]))
            throw new InvalidOperationException("DeflateStream.Flush did not end with a sync flush.");
        return all.Slice(0, all.Length - 4).ToArray();
    }

    /// <summary>A whole deflate stream, ended with a final block (BFINAL, RFC 7692 7.2.3.4), nothing removed.</summary>
    public static byte[] CompressFinal(ReadOnlySpan<byte> message)
    {
        using var output = new MemoryStream();
        using (var stream = new DeflateStream(output, CompressionLevel.Optimal, leaveOpen: true))
            stream.Write(message);
        return output.ToArray();
    }

    public void Dispose() => _stream?.Dispose();
}

/// <summary>
/// Inflates what a permessage-deflate peer sent, with DeflateStream: 00 00 FF FF put back after
/// each message; with context takeover one decompressor for all messages (fed as they come),
/// without it a fresh one each, so a peer that wrongly kept its window fails here.
/// </summary>
internal sealed class WsTestInflater(bool takeover) : IDisposable
{
    private readonly Feed _feed = new();
    private DeflateStream? _stream;

    /// <summary>The message; throws <see cref="InvalidDataException"/> when the data does not inflate.</summary>
    public byte[] Inflate(byte[] compressed)
    {
        if (!takeover || _stream is null)
        {
            _stream?.Dispose();
            _feed.Clear();
            _stream = new DeflateStream(_feed, CompressionMode.Decompress, leaveOpen: true);
        }

        _feed.Add(compressed);
        _feed.Add([0x00, 0x00, 0xFF, 0xFF]);
        using var output = new MemoryStream();
        var buffer = new byte[64 * 1024];
        int read;
        while ((read = _stream.Read(buffer, 0, buffer.Length)) > 0)
            output.Write(buffer, 0, read);
        return output.ToArray();
    }

    public void Dispose() => _stream?.Dispose();

    /// <summary>A stream of the bytes fed so far: a read returns 0 when they are used up, and more may be fed later.</summary>
    private sealed class Feed : Stream
    {
        private readonly Queue<byte[]> _parts = new();
        private int _offset;

        public override bool CanRead => true;

        public override bool CanSeek => false;

        public override bool CanWrite => false;

        public override long Length => throw new NotSupportedException();

        public override long Position
        {
            get => throw new NotSupportedException();
            set => throw new NotSupportedException();
        }

        public void Add(byte[] part) => _parts.Enqueue(part);

        public void Clear()
        {
            _parts.Clear();
            _offset = 0;
        }

        public override int Read(byte[] buffer, int offset, int count)
        {
            while (_parts.Count > 0 && _offset == _parts.Peek().Length)
            {
                _parts.Dequeue();
                _offset = 0;
            }

            if (_parts.Count == 0)
                return 0;
            var part = _parts.Peek();
            var length = Math.Min(count, part.Length - _offset);
            Array.Copy(part, _offset, buffer, offset, length);
            _offset += length;
            return length;
        }

        public override void Flush()
        {
        }

        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

        public override void SetLength(long value) => throw new NotSupportedException();

        public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();
    }
}
