using System.Net;
using NetServer.Streams;

namespace NetServer.MicroBenchmarks;

/// <summary>A TCP client whose connection runs over a <see cref="FeedLayer"/> (its socket stays idle).</summary>
internal sealed class FeedClient(IPEndPoint endpoint, FeedLayer layer) : TcpClient(endpoint)
{
    private protected override SecureLayer CreateSecureLayer() => layer;
}
