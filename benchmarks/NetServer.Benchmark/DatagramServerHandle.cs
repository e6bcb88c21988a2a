using System;
using System.Net;
using System.Threading;
using System.Threading.Tasks;

namespace NetServer.Benchmark;

internal abstract partial class ServerHandle
{
    /// <summary>A udp or sudp server; with a group it starts as a multicast server sending there.</summary>
    private sealed class Datagram(UdpServer server, ServerCounters counters, IPEndPoint? group) : ServerHandle(counters)
    {
        public override EndPoint Endpoint => server.Endpoint;

        public override EndPoint ClientTarget => group ?? server.Endpoint;

        public override long BytesReceived => server.BytesReceived;

        public override long BytesSent => server.BytesSent;

        public override long ConnectedSessions => 0;

        public override bool HasAudience => true;

        public override Diagnostics.NetServerEventListener? EventListener
        {
            set => server.EventListener = value;
        }

        public override DatagramFigures Datagrams => new()
        {
            ServerReceived = server.DatagramsReceived,
            ServerSent = server.DatagramsSent,
            ServerDropped = Counters.Dropped,
        };

        public override bool Start() => group is null ? server.Start() : server.Start(group);

        public override bool Stop() => server.Stop();

        public override ValueTask<bool> MulticastAsync(ReadOnlyMemory<byte> message, CancellationToken token) => server.MulticastAsync(message, token);

        public override void Dispose() => server.Dispose();
    }
}
