using System.IO;
using System.IO.Compression;

namespace NetServer.WebSockets;

/// <summary>
/// Decompresses the messages one connection receives (RFC 7692 7.2.2). The compressed payload of a
/// message is fed as its frames arrive (<see cref="Append"/>) and inflated at once, so only the
/// output is held, never the compressed bytes; <see cref="Finish"/> adds the removed
/// <c>00 00 FF FF</c> and hands out the whole message.
/// </summary>
/// <remarks>
/// <para>The output never grows past <c>maxMessageSize</c>: inflating stops as soon as one byte
/// more comes out, and the message fails as <see cref="WsInflateFailure.TooBig"/> (a few KiB of
/// zeros can inflate to gigabytes). Invalid deflate data fails as
/// <see cref="WsInflateFailure.Corrupt"/>. After a failure the inflater refuses everything: the
/// connection is to be closed. A message that is both (more than the bound comes out before the
/// data turns invalid) can fail either way, depending on how its frames were cut: zlib reports
/// invalid data found in the same call that inflated the bytes before it, so with the invalid bytes
/// in the same part the failure is Corrupt, and in a later part TooBig. Both close the connection;
/// no more than the bound is ever held.</para>
/// <para>With context takeover one <see cref="DeflateStream"/> lives as long as the connection
/// (its window carries over); when the peer resets per message, the stream is made for each
/// message and freed after it. A peer that ends a message with a final block (BFINAL, RFC 7692
/// 7.2.3.4) ends the deflate stream, which DeflateStream cannot continue: the rest of that message
/// is ignored and the next one starts with an empty window.</para>
/// <para>The output lives in a pooled buffer owned by the inflater; <see cref="Release"/> gives it
/// back when the connection goes idle. Not thread-safe.</para>
/// </remarks>
internal sealed class WsInflater : IDisposable
{
    // Output is asked of the DeflateStream in steps of at least this much free space.
    private const int ReadStep = 16 * 1024;

    private readonly PooledBuffer _output;
    private readonly Source _source = new();
    private readonly byte[] _oneMore = new byte[1];
    private DeflateStream? _stream;
    private bool _inMessage;
    private bool _streamEnded;
    private bool _disposed;

    /// <param name="maxMessageSize">The most bytes a message may inflate to.</param>
    /// <param name="resetPerMessage">True when the peer agreed to no context takeover (<see cref="WsDeflateParameters.ResetsDecompressor"/>).</param>
    /// <param name="pool">Where the output memory comes from; <see cref="BufferPool.Shared"/> by default.</param>
    public WsInflater(int maxMessageSize, bool resetPerMessage, BufferPool? pool = null)
    {
        _output = new PooledBuffer(pool ?? BufferPool.Shared, ThrowHelper.ValidateOption(maxMessageSize, zeroAllowed: false, nameof(maxMessageSize)));
        ResetsPerMessage = resetPerMessage;
    }

    /// <summary>The most bytes a message may inflate to.</summary>
    public int MaxMessageSize => _output.Limit;

    /// <summary>Whether each message is inflated with an empty window.</summary>
    public bool ResetsPerMessage { get; }

    /// <summary>Why the inflater stopped, or <see cref="WsInflateFailure.None"/>.</summary>
    public WsInflateFailure Failure { get; private set; }

    /// <summary>What went wrong, for a log or a close reason; empty while <see cref="Failure"/> is None.</summary>
    public string Error { get; private set; } = string.Empty;

    /// <summary>Bytes inflated so far for the current (or the last finished) message.</summary>
    public int Length => _output.Length;

    /// <summary>Whether a decompressor is held now (between messages: only with context takeover).</summary>
    internal bool HoldsDecompressor => _stream is not null;

    /// <summary>Size of the output array held now.</summary>
    internal int Capacity => _output.Capacity;

    private static ReadOnlySpan<byte> SyncMarker => [0x00, 0x00, 0xFF, 0xFF];

    /// <summary>
    /// Inflates the next part of the current message's compressed payload (a frame's payload, in
    /// any split). The first call after <see cref="Finish"/> starts a new message and drops the
    /// last one's output.
    /// </summary>
    /// <returns>False when the message is too big or corrupt (see <see cref="Failure"/>).</returns>
    public bool Append(ReadOnlySpan<byte> compressed)
    {
        if (!Begin())
            return false;
        return compressed.IsEmpty || Inflate(compressed);
    }

    /// <summary>
    /// Ends the current message (the last frame arrived) and returns it, held in the inflater's
    /// buffer until the next <see cref="Append"/>, <see cref="Finish"/> or <see cref="Release"/>.
    /// </summary>
    /// <returns>False when the message is too big or corrupt (see <see cref="Failure"/>).</returns>
    public bool Finish(out ReadOnlySpan<byte> message)
    {
        message = default;
        if (!Begin() || !Inflate(SyncMarker))
            return false;
        _inMessage = false;
        if (ResetsPerMessage || _streamEnded)
            DropStream();
        message = _output.WrittenSpan;
        return true;
    }

    /// <summary>The message <see cref="Finish"/> returned, as an array segment (for hooks that take an array).</summary>
    public ArraySegment<byte> Message => _output.WrittenSegment;

    /// <summary>Gives the output memory back to the pool when between messages (the last message is then gone).</summary>
    public void Release()
    {
        if (_inMessage)
            return;
        _output.Consume(_output.Length);
        _output.Release();
    }

    /// <summary>Frees the decompressor and the output memory.</summary>
    public void Dispose()
    {
        if (_disposed)
            return;
        _disposed = true;
        DropStream();
        _output.Dispose();
    }

    private bool Begin()
    {
        if (_disposed)
            ThrowHelper.ThrowObjectDisposed(nameof(WsInflater));
        if (Failure != WsInflateFailure.None)
            return false;
        if (!_inMessage)
        {
            _inMessage = true;
            _streamEnded = false;
            _output.Consume(_output.Length);
        }

        return true;
    }

    private unsafe bool Inflate(ReadOnlySpan<byte> compressed)
    {
        if (_streamEnded)
            return true; // what follows a final block in this message (RFC 7692 7.2.3.4: one empty block's header)
        var stream = _stream ??= new DeflateStream(_source, CompressionMode.Decompress, leaveOpen: true);

        // The caller's bytes are lent to the source only while pinned here: Drain reads them all.
        fixed (byte* input = compressed)
        {
            _source.Lend(input, compressed.Length);
            try
            {
                return Drain(stream);
            }
            finally
            {
                _source.Lend(null, 0);
            }
        }
    }

    /// <summary>Reads all the output the input lent to the source makes, within the limit.</summary>
    private bool Drain(DeflateStream stream)
    {
        try
        {
            while (true)
            {
                var room = _output.Limit - _output.Length;
                if (room == 0)
                {
                    // Full: the message fits only if nothing more comes out.
                    if (stream.Read(_oneMore, 0, 1) == 0)
                        break;
                    return Fail(WsInflateFailure.TooBig, $"The message inflates to more than the {_output.Limit}-byte limit.");
                }

                _output.TryGetWritable(Math.Min(room, ReadStep), out var free);
                var count = stream.Read(free.Array!, free.Offset, free.Count);
                if (count == 0)
                    break;
                _output.Advance(count);
            }
        }
        catch (InvalidDataException e)
        {
            return Fail(WsInflateFailure.Corrupt, "The compressed message is not valid deflate data: " + e.Message);
        }

        // DeflateStream.Read returns 0 either because it wants input the source no longer has, or,
        // without asking, because the deflate stream ended (a final block).
        if (!_source.RanDry)
            _streamEnded = true;
        return true;
    }

    private bool Fail(WsInflateFailure failure, string error)
    {
        Failure = failure;
        Error = error;
        DropStream();
        _output.Consume(_output.Length);
        _output.Release();
        return false;
    }

    private void DropStream()
    {
        var stream = _stream;
        _stream = null;
        stream?.Dispose();
    }

    /// <summary>Where the DeflateStream reads: the pinned bytes of the part being inflated.</summary>
    private sealed unsafe class Source : Stream
    {
        private byte* _input;
        private int _length;
        private int _position;

        /// <summary>The last read found no input left (rather than the DeflateStream not asking).</summary>
        public bool RanDry { get; private set; }

        public override bool CanRead => true;

        public override bool CanSeek => false;

        public override bool CanWrite => false;

        public override long Length => throw new NotSupportedException();

        public override long Position
        {
            get => throw new NotSupportedException();
            set => throw new NotSupportedException();
        }

        public void Lend(byte* input, int length)
        {
            _input = input;
            _length = length;
            _position = 0;
            RanDry = false;
        }

        // DeflateStream reads through this overload (checked on .NET 10); the span one of the base
        // class would stage through a pooled array and end up here too.
        public override int Read(byte[] buffer, int offset, int count)
        {
            var available = Math.Min(count, _length - _position);
            if (available <= 0)
            {
                RanDry = true;
                return 0;
            }

            new ReadOnlySpan<byte>(_input + _position, available).CopyTo(new Span<byte>(buffer, offset, available));
            _position += available;
            return available;
        }

        public override void Flush()
        {
        }

        public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();

        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

        public override void SetLength(long value) => throw new NotSupportedException();
    }
}
