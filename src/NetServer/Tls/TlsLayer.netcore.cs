using System.IO;
using System.Net.Security;

namespace NetServer.Tls;

/// <summary>TLS over a connection: an <see cref="SslStream"/> over the socket, set up from an <see cref="SslContext"/>.</summary>
internal sealed class TlsLayer : SecureLayer
{
    private readonly SslContext _context;
    private readonly string? _targetHost;

    /// <param name="context">The TLS settings.</param>
    /// <param name="targetHost">The server's name for a client (validated against its certificate, sent as SNI); null for a server.</param>
    public TlsLayer(SslContext context, string? targetHost)
    {
        _context = context;
        _targetHost = targetHost;
    }

    public override TimeSpan HandshakeTimeout => _context.HandshakeTimeout;

    public override async Task<Stream> AuthenticateAsync(Stream transport, ReadGate gate, CancellationToken cancellationToken)
    {
        // The SslStream's inner stream is ours, so the gate knows when a read waits for bytes (and
        // cannot be decrypting): only then, or between reads, may ShutdownAsync reach OpenSSL.
        var stream = new SslStream(new GatedStream(transport, gate), leaveInnerStreamOpen: false);
        try
        {
            if (_targetHost is null)
                await _context.AuthenticateAsServerAsync(stream, cancellationToken).ConfigureAwait(false);
            else
                await stream.AuthenticateAsClientAsync(_context.CreateClientOptions(_targetHost), cancellationToken).ConfigureAwait(false);
            return stream;
        }
        catch
        {
            await stream.DisposeAsync().ConfigureAwait(false);
            throw;
        }
    }

    // SslStream.ShutdownAsync runs OpenSSL's SSL_shutdown before it returns, then writes the alert.
    public override Task ShutdownAsync(Stream stream) => ((SslStream)stream).ShutdownAsync();

    // By value: netstandard2.1 has no SslProtocols.Tls13, and the old versions are only reported here, never chosen.
    public override string? ProtocolVersion(Stream stream) => (int)((SslStream)stream).SslProtocol switch
    {
        0x3000 => "1.3",
        0x0C00 => "1.2",
        0x0300 => "1.1",
        0x00C0 => "1.0",
        _ => null,
    };
}
