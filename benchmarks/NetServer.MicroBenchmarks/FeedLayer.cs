using System;
using System.IO;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Streams;
using NetServer.Tls;

namespace NetServer.MicroBenchmarks;

/// <summary>
/// A secure layer without security: its "handshake" returns a <see cref="FeedStream"/>, so the
/// connection's engine (receive loop, retained input, read sizes, hooks, send queue and flusher)
/// runs over bytes the benchmark hands it instead of over its socket, which carries nothing.
/// </summary>
internal sealed class FeedLayer(FeedStream stream) : SecureLayer
{
    public override TimeSpan HandshakeTimeout => TimeSpan.FromSeconds(10);

    public override Task<Stream> AuthenticateAsync(Stream transport, ReadGate gate, CancellationToken cancellationToken) =>
        Task.FromResult<Stream>(stream);

    public override Task ShutdownAsync(Stream stream) => Task.CompletedTask;
}
