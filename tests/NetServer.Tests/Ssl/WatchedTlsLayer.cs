using NetServer.Streams;
using NetServer.Tls;
using System;
using System.IO;
using System.Net.Security;
using System.Threading;
using System.Threading.Tasks;

namespace NetServer.Tests.Ssl;

/// <summary>
/// TLS as the library runs it (an SslStream over a <see cref="GatedStream"/> over the socket, with
/// the context's options), plus two probes that show whether the layer's shutdown ever starts
/// while a read may be decrypting: the SslStream (a subclass) counts the reads under way, and a
/// stream between it and the gated one tells when such a read waits for bytes. A read under way
/// that is not waiting for bytes may be decrypting, and OpenSSL does not support SSL_shutdown
/// then. (OpenSSL shows such an overlap only now and then, as corruption or a crash, and the
/// engine discards what a closing connection reads: a test has to look for the overlap itself.)
/// </summary>
internal sealed class WatchedTlsLayer(SslContext context, string? targetHost, LayerWatch watch) : SecureLayer
{
    public override TimeSpan HandshakeTimeout => context.HandshakeTimeout;

    public override async Task<Stream> AuthenticateAsync(Stream transport, ReadGate gate, CancellationToken cancellationToken)
    {
        var stream = new WatchedSslStream(new WaitProbe(new GatedStream(transport, gate), watch), watch);
        try
        {
            if (targetHost is null)
                await stream.AuthenticateAsServerAsync(context.CreateServerOptions(), cancellationToken).ConfigureAwait(false);
            else
                await stream.AuthenticateAsClientAsync(context.CreateClientOptions(targetHost), cancellationToken).ConfigureAwait(false);
            return stream;
        }
        catch
        {
            await stream.DisposeAsync().ConfigureAwait(false);
            throw;
        }
    }

    public override Task ShutdownAsync(Stream stream) => ((SslStream)stream).ShutdownAsync();

    /// <summary>Counts its reads under way, checks each shutdown against them, and tells how the reads ended.</summary>
    private sealed class WatchedSslStream(WaitProbe inner, LayerWatch watch) : SslStream(inner, leaveInnerStreamOpen: false)
    {
        private int _reads;

        private bool MayDecrypt => Volatile.Read(ref _reads) != 0 && !inner.IsWaiting;

        public override async ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
        {
            Interlocked.Increment(ref _reads);
            try
            {
                var read = await base.ReadAsync(buffer, cancellationToken).ConfigureAwait(false);
                if (read == 0 && !buffer.IsEmpty)
                    watch.ReadEnded(closeNotify: !inner.SawEnd);
                return read;
            }
            finally
            {
                Interlocked.Decrement(ref _reads);
            }
        }

        public override Task ShutdownAsync()
        {
            // OpenSSL's part runs inside base.ShutdownAsync: no read may decrypt before, during or after it.
            var overlapped = MayDecrypt;
            Task written;
            try
            {
                written = base.ShutdownAsync();
            }
            catch
            {
                watch.ShutdownFailed();
                throw;
            }

            watch.ShutDown(overlapped || MayDecrypt);
            return written;
        }
    }

    /// <summary>
    /// The SslStream's inner stream: tells when a read waits for bytes, and whether the transport
    /// ended; calls <see cref="LayerWatch.BytesArrived"/> with bytes that are about to be decrypted.
    /// </summary>
    private sealed class WaitProbe(Stream inner, LayerWatch watch) : Stream
    {
        private volatile bool _waiting;
        private volatile bool _sawEnd;

        public bool IsWaiting => _waiting;

        public bool SawEnd => _sawEnd;

        public override bool CanRead => true;

        public override bool CanWrite => true;

        public override bool CanSeek => false;

        public override long Length => throw new NotSupportedException();

        public override long Position
        {
            get => throw new NotSupportedException();
            set => throw new NotSupportedException();
        }

        public override async ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
        {
            int read;
            _waiting = true;
            try
            {
                read = await inner.ReadAsync(buffer, cancellationToken).ConfigureAwait(false);
            }
            finally
            {
                _waiting = false;
            }

            if (read == 0 && !buffer.IsEmpty)
                _sawEnd = true;
            else if (read > 0)
                watch.BytesArrived?.Invoke();
            return read;
        }

        public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
            ReadAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

        public override int Read(byte[] buffer, int offset, int count) => throw new NotSupportedException("The layer reads asynchronously.");

        public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default) => inner.WriteAsync(buffer, cancellationToken);

        public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) => inner.WriteAsync(buffer, offset, count, cancellationToken);

        public override void Write(byte[] buffer, int offset, int count) => inner.Write(buffer, offset, count);

        public override void Flush() => inner.Flush();

        public override Task FlushAsync(CancellationToken cancellationToken) => inner.FlushAsync(cancellationToken);

        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

        public override void SetLength(long value) => throw new NotSupportedException();

        protected override void Dispose(bool disposing)
        {
            if (disposing)
                inner.Dispose();
            base.Dispose(disposing);
        }
    }
}

/// <summary>What the <see cref="WatchedTlsLayer"/>s of a test saw, over all their connections.</summary>
internal sealed class LayerWatch
{
    private int _shutdowns;
    private int _overlapped;
    private int _failed;
    private int _closeNotifies;
    private int _bareEnds;

    /// <summary>Shutdowns started (each writes a close_notify).</summary>
    public int Shutdowns => Volatile.Read(ref _shutdowns);

    /// <summary>Shutdowns that started, or ran, while a read of the same connection might be decrypting.</summary>
    public int Overlapped => Volatile.Read(ref _overlapped);

    /// <summary>Shutdowns that threw before writing anything.</summary>
    public int Failed => Volatile.Read(ref _failed);

    /// <summary>Reads that ended on the peer's close_notify.</summary>
    public int CloseNotifies => Volatile.Read(ref _closeNotifies);

    /// <summary>Reads that ended on a bare end of stream (the peer sent no close_notify).</summary>
    public int BareEnds => Volatile.Read(ref _bareEnds);

    /// <summary>Called on the reader's thread when bytes came from the transport, before they are decrypted.</summary>
    public Action? BytesArrived { get; set; }

    public void ShutDown(bool overlapped)
    {
        Interlocked.Increment(ref _shutdowns);
        if (overlapped)
            Interlocked.Increment(ref _overlapped);
    }

    public void ShutdownFailed() => Interlocked.Increment(ref _failed);

    public void ReadEnded(bool closeNotify) => Interlocked.Increment(ref closeNotify ? ref _closeNotifies : ref _bareEnds);
}
