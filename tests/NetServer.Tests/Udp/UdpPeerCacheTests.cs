using System;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Udp;

/// <summary>
/// The endpoint caches of a UDP socket (raw address to the endpoint object the hooks see, and
/// back): a server talking to a steady set of peers, more than a small cache would hold, allocates
/// nothing per datagram once it has seen each peer.
/// </summary>
public class UdpPeerCacheTests
{
    /// <summary>Echoes every datagram and reads its receive thread's allocation counter at two datagram counts.</summary>
    private sealed class MeasuringEchoServer(IPEndPoint endpoint, long from, long to) : UdpServer(endpoint)
    {
        private long _received;
        private long _allocatedAtFrom = -1;
        private long _allocatedAtTo = -1;

        public long Received => Interlocked.Read(ref _received);

        /// <summary>Bytes the receive thread allocated between datagram <c>from</c> and datagram <c>to</c> (both echoed).</summary>
        public long Allocated => Interlocked.Read(ref _allocatedAtTo) - Interlocked.Read(ref _allocatedAtFrom);

        protected override void OnReceived(EndPoint endpoint, ReadOnlySpan<byte> buffer)
        {
            SendAsync(endpoint, buffer);
            var count = Interlocked.Increment(ref _received);
            if (count == from)
                Interlocked.Exchange(ref _allocatedAtFrom, GC.GetAllocatedBytesForCurrentThread());
            else if (count == to)
                Interlocked.Exchange(ref _allocatedAtTo, GC.GetAllocatedBytesForCurrentThread());
        }
    }

    [Net10Fact("the allocation-free SocketAddress socket calls, and the caches with them, are the net10.0 build's")]
    public async Task An_echo_server_with_five_thousand_steady_peers_allocates_nothing_per_datagram_after_warm_up()
    {
        const int peers = 5000; // the caches once held 1,024 peers and then started over
        const int rounds = 4;   // the first one warms the caches up
        const int batch = 500;  // well inside the server's receive buffer, so the kernel drops none
        var payload = new byte[32];
        var sockets = new Socket[peers];
        try
        {
            for (var i = 0; i < peers; i++)
            {
                sockets[i] = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
                sockets[i].Bind(new IPEndPoint(IPAddress.Loopback, 0));
            }

            // With OptionDedicatedThread the receive, OnReceived and the echo's send all run on the
            // socket's own thread, so that thread's allocation counter sees the whole path.
            await using var server = new MeasuringEchoServer(new IPEndPoint(IPAddress.Loopback, 0), peers, (long)peers * rounds)
            {
                OptionDedicatedThread = true,
                OptionAutoReceive = true,
                OptionReceiveBufferSize = UdpTest.LargeBuffer,
            };
            Assert.True(server.Start());
            var target = server.Endpoint;

            long sent = 0;
            for (var round = 0; round < rounds; round++)
            {
                for (var first = 0; first < peers; first += batch)
                {
                    for (var i = first; i < first + batch; i++)
                        sockets[i].SendTo(payload, target);
                    sent += batch;
                    await Wait.UntilAsync(() => server.Received == sent, () => $"{sent} datagrams at the server (got {server.Received})");
                }
            }

            var measured = (long)peers * (rounds - 1);
            Assert.True(server.Allocated >= 0, "The allocation counter was not read at both marks.");
            // Less than a byte per datagram: the caches cleared at 1,024 peers cost about 248 bytes
            // per datagram; one-off allocations on the thread (the runtime's tiering, a few KB once
            // in a CI run) are not per datagram.
            Assert.True(server.Allocated < measured, $"The receive thread allocated {server.Allocated} bytes for {measured} datagrams ({(double)server.Allocated / measured:F1} per datagram) after warm-up.");
            Assert.Equal(sent, server.DatagramsSent);
        }
        finally
        {
            foreach (var socket in sockets)
                socket?.Dispose();
        }
    }
}
