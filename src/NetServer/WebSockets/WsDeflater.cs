using System.Buffers;
using System.IO;
using System.IO.Compression;

namespace NetServer.WebSockets;

/// <summary>
/// Compresses the messages one connection sends (RFC 7692 7.2.1): each message is deflated and
/// ended with a sync flush, whose trailing <c>00 00 FF FF</c> is removed. With context takeover
/// one <see cref="DeflateStream"/> lives as long as the connection, so a message can refer back to
/// the ones before it; with a reset per message the stream is made for each message and freed
/// after it (idle connections then hold no compressor).
/// </summary>
/// <remarks>
/// <para>Every compressed message must be sent, and in the order it was compressed: with context
/// takeover the next message may refer to this one's bytes, which the peer only has if it got
/// this message. So the caller compresses and queues a message under the same ordering (one
/// sender at a time), and a message, once compressed, cannot be sent uncompressed instead.</para>
/// <para>The output lives in a pooled scratch buffer owned by the deflater until the next call;
/// <see cref="ReleaseScratch"/> gives it back when the connection goes idle. After warm-up a
/// message with context takeover allocates nothing. Not thread-safe.</para>
/// </remarks>
internal sealed partial class WsDeflater : IDisposable
{
    private const int InitialScratch = 64 * 1024;

    private static readonly Lazy<bool> s_isSupported = new(ProbeSupport);

    private readonly CompressionLevel _level;
    private readonly BufferPool _pool;
    private readonly PooledBuffer _scratch;
    private readonly Sink _sink;
    private DeflateStream? _stream;
    private bool _disposed;

    /// <param name="level">How hard to compress.</param>
    /// <param name="resetPerMessage">True when our side agreed to no context takeover (<see cref="WsDeflateParameters.ResetsCompressor"/>).</param>
    /// <param name="pool">Where the scratch memory comes from; <see cref="BufferPool.Shared"/> by default.</param>
    public WsDeflater(CompressionLevel level, bool resetPerMessage, BufferPool? pool = null)
    {
        _level = level;
        ResetsPerMessage = resetPerMessage;
        _pool = pool ?? BufferPool.Shared;
        _scratch = new PooledBuffer(_pool, int.MaxValue);
        _sink = new Sink(_scratch);
    }

    /// <summary>
    /// Whether this runtime's <see cref="DeflateStream"/> can do permessage-deflate: its
    /// <c>Flush</c> must emit a sync flush (it does on .NET Core 3.0 and later; on .NET Framework,
    /// which the netstandard2.0 build can run on, <c>Flush</c> emits nothing). Checked once, by
    /// compressing and inflating two messages; when false, do not offer or accept the extension.
    /// </summary>
    public static bool IsSupported => s_isSupported.Value;

    /// <summary>Whether each message starts with an empty window.</summary>
    public bool ResetsPerMessage { get; }

    /// <summary>Whether a compressor is held now (between messages: only with context takeover).</summary>
    internal bool HoldsCompressor => _stream is not null;

    /// <summary>Size of the scratch array held now (0 after <see cref="ReleaseScratch"/>).</summary>
    internal int ScratchCapacity => _scratch.Capacity;

    // The end of a sync flush (an empty stored block), which RFC 7692 7.2.1 removes from the message.
    private static ReadOnlySpan<byte> SyncMarker => [0x00, 0x00, 0xFF, 0xFF];

    // The compressed form of an empty message (RFC 7692 7.2.3.6): an empty stored block's header bits,
    // the rest of the block being the removed marker. The compressor is not touched.
    private static ReadOnlySpan<byte> EmptyMessage => [0x00];

    /// <summary>
    /// Compresses one message and returns its payload (the marker removed), held in the
    /// deflater's scratch buffer: valid until the next call on this deflater. The caller writes
    /// the frame header (which needs this length) and then these bytes.
    /// </summary>
    /// <exception cref="ObjectDisposedException">The deflater was disposed.</exception>
    /// <exception cref="NotSupportedException">This runtime's DeflateStream does not sync-flush (see <see cref="IsSupported"/>).</exception>
    public ReadOnlySpan<byte> Compress(ReadOnlySpan<byte> payload)
    {
        if (_disposed)
            ThrowHelper.ThrowObjectDisposed(nameof(WsDeflater));
        _scratch.Consume(_scratch.Length);
        if (payload.IsEmpty)
            return EmptyMessage;

        // Fastest expands random data by about 6% (fixed Huffman codes): a quarter more is a safe bound.
        _scratch.Limit = (int)Math.Min(int.MaxValue, payload.Length + ((long)payload.Length >> 2) + 1024);
        _scratch.TryGetWritable(Math.Min((payload.Length >> 1) + 64, InitialScratch), out _); // doubles from there if needed
        var stream = _stream ??= new DeflateStream(_sink, _level, leaveOpen: true);
        var flushed = false;
        try
        {
            WritePayload(stream, payload);
            stream.Flush();
            flushed = true;
        }
        finally
        {
            // A failure leaves the window holding bytes the peer never gets: start the next message afresh.
            if (!flushed)
            {
                DropStream();
                _scratch.Consume(_scratch.Length);
            }
        }

        var written = _scratch.WrittenSpan;
        if (written.Length < SyncMarker.Length || !written.Slice(written.Length - SyncMarker.Length).SequenceEqual(SyncMarker))
        {
            DropStream();
            _scratch.Consume(_scratch.Length);
            throw new NotSupportedException("DeflateStream.Flush did not end the message with a sync flush (00 00 FF FF), which permessage-deflate needs; this runtime cannot compress WebSocket messages.");
        }

        if (ResetsPerMessage)
            DropStream();
        return written.Slice(0, written.Length - SyncMarker.Length);
    }

    /// <summary>Compresses one message into <paramref name="output"/> (for a caller that knows the length it needs some other way).</summary>
    public void Compress(ReadOnlySpan<byte> payload, IBufferWriter<byte> output)
    {
        if (output is null)
            ThrowHelper.ThrowArgumentNull(nameof(output));
        output.Write(Compress(payload));
    }

    /// <summary>Gives the scratch memory back to the pool (the last result of <see cref="Compress(ReadOnlySpan{byte})"/> is then gone).</summary>
    public void ReleaseScratch()
    {
        _scratch.Consume(_scratch.Length);
        _scratch.Release();
    }

    /// <summary>Frees the compressor and the scratch memory.</summary>
    public void Dispose()
    {
        if (_disposed)
            return;
        _disposed = true;
        DropStream();
        _scratch.Dispose();
    }

    private void DropStream()
    {
        var stream = _stream;
        if (stream is null)
            return;
        _stream = null;

        // Dispose ends the deflate stream with a final block, written to the sink: it must not land
        // in the scratch buffer, which may hold the message just returned.
        _sink.Discarding = true;
        try
        {
            stream.Dispose();
        }
        finally
        {
            _sink.Discarding = false;
        }
    }

    private static bool ProbeSupport()
    {
        var text = "Hello, Hello, Hello"u8;
        try
        {
            using var deflater = new WsDeflater(CompressionLevel.Fastest, resetPerMessage: false);
            using var inflater = new WsInflater(1024, resetPerMessage: false);
            for (var i = 0; i < 2; i++)
            {
                if (!inflater.Append(deflater.Compress(text)) || !inflater.Finish(out var message) || !message.SequenceEqual(text))
                    return false;
            }

            return true;
        }
        catch (NotSupportedException)
        {
            return false;
        }
    }

    /// <summary>Where the DeflateStream writes: the scratch buffer, within its limit.</summary>
    private sealed class Sink : Stream
    {
        private readonly PooledBuffer _buffer;

        public Sink(PooledBuffer buffer) => _buffer = buffer;

        /// <summary>Drop what is written (the end of a stream being disposed).</summary>
        public bool Discarding { get; set; }

        public override bool CanRead => false;

        public override bool CanSeek => false;

        public override bool CanWrite => true;

        public override long Length => throw new NotSupportedException();

        public override long Position
        {
            get => throw new NotSupportedException();
            set => throw new NotSupportedException();
        }

        // DeflateStream writes through this overload (checked on .NET 10); the span one of the base
        // class would stage through a pooled array and end up here too.
        public override void Write(byte[] buffer, int offset, int count)
        {
            if (Discarding)
                return;
            if (!_buffer.TryGetWritable(count, out var free))
                ThrowHelper.ThrowInvalidOperation("The compressed message outgrew its bound.");
            new ReadOnlySpan<byte>(buffer, offset, count).CopyTo(free.AsSpan());
            _buffer.Advance(count);
        }

        public override void Flush()
        {
        }

        public override int Read(byte[] buffer, int offset, int count) => throw new NotSupportedException();

        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

        public override void SetLength(long value) => throw new NotSupportedException();
    }
}
