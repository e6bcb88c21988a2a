using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Streams;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Tcp;

/// <summary>
/// A session type that overrides a compatible <c>SendAsync</c> gets multicasts through it, as in
/// NetCoreServer (whose multicast benchmark caps each session in an override of
/// <c>SendAsync(byte[], long, long)</c>); a session type without one keeps the shared-copy path.
/// Compatibility/NetCoreServerProgramsTests runs the benchmark's own session shape (our mirror).
/// </summary>
public class MulticastOverrideTests
{
    private const int Message = 64 * 1024;

    [Fact]
    public async Task Multicast_goes_through_a_capping_SendAsync_override_instead_of_disconnecting_the_session()
    {
        // Small socket buffers on both ends, so the kernel absorbs little of what the peer never reads.
        using var server = new CappedServer { OptionSendBufferSize = 8 * 1024 };
        Assert.True(server.Start());
        using var peer = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { ReceiveBufferSize = 4 * 1024 };
        await peer.ConnectAsync(server.Endpoint);
        var session = await server.Connected.Task.WaitAsync(Wait.Default);

        // 8 MiB to a peer that reads nothing: twice the default OptionSendBufferLimit (4 MiB), so
        // the shared-copy path would disconnect the session (SendBufferFull) instead of capping it.
        var message = new byte[Message];
        for (var i = 0; i < 128; i++)
            Assert.True(server.Multicast(message));

        Assert.True(session.Refused > 0, "The session's SendAsync override never refused a multicast: Multicast did not call it.");
        Assert.InRange(session.BytesPending, 1, CapSession.Limit);
        Assert.True(session.IsConnected, $"The session was disconnected ({session.DisconnectReason}).");
        Assert.Equal(1, server.ConnectedSessions);
    }

    [Fact]
    public async Task Multicast_calls_a_span_override_once_per_message_while_plain_sessions_share_one_copy()
    {
        const int Messages = 20;
        const int Plain = 3;
        var pool = new LeakCheckingBufferPool();
        using var server = new MixedServer(overriding: 1) { BufferPool = pool };
        Assert.True(server.Start());
        var peers = new List<Socket>();
        try
        {
            for (var i = 0; i < 1 + Plain; i++)
                peers.Add(await ConnectAsync(server));
            await Wait.UntilAsync(() => server.Ready.Count == 1 + Plain, "the sessions to connect");
            var counting = server.Ready.OfType<SpanCountingSession>().Single();

            // A session's receive loop starts after its OnConnected and rents a receive buffer for
            // its first read: one starting while the multicasts below run counts among their rents
            // (a fresh-clone run saw 21). A byte from each peer, received, shows every loop has
            // made that read (and that the session is ready for multicasts, which comes before).
            foreach (var peer in peers)
                Assert.Equal(1, await peer.SendAsync(new byte[] { 1 }, SocketFlags.None));
            await Wait.UntilAsync(() => server.Ready.All(static session => session.BytesReceived == 1), "every session to receive its byte");

            var payload = Framing.Pattern(0, 1000);
            var reads = peers.Select(peer => Wait.ReadExactlyAsync(peer, Messages * payload.Length)).ToArray();
            var rentsBefore = pool.Rents;
            for (var i = 0; i < Messages; i++)
                Assert.True(server.Multicast(payload));
            var rents = pool.Rents - rentsBefore;

            foreach (var data in await Task.WhenAll(reads).WaitAsync(Wait.Default))
                Assert.Equal(Enumerable.Repeat(payload, Messages).SelectMany(static b => b), data);
            Assert.Equal(Messages, counting.Calls);
            Assert.True(counting.SawOnlyPayload(payload), "The override got other bytes than the multicast payload.");

            // One shared copy per multicast for all the plain sessions (a copy each would be 3 per multicast).
            Assert.True(rents <= Messages, $"{Messages} multicasts to {Plain} plain sessions rented {rents} buffers.");
        }
        finally
        {
            foreach (var peer in peers)
                peer.Dispose();
        }
    }

    [Theory]
    [InlineData("span")]
    [InlineData("array")]
    public async Task An_override_that_passes_the_bytes_on_shares_the_multicast_copy(string overridden)
    {
        const int Sessions = 4;
        const int Messages = 10;
        var pool = new LeakCheckingBufferPool();
        using var server = new MixedServer(Sessions, overridden == "span" ? static s => new SpanCountingSession(s) : static s => new CapSession(s))
        {
            BufferPool = pool,
            OptionSendBufferSize = 8 * 1024,
        };
        Assert.True(server.Start());
        var peers = new List<Socket>();
        try
        {
            // Peers that do not read yet, with small buffers: the sessions' queues fill up, so the
            // multicasts are queued (by reference or as copies) rather than sent straight away.
            for (var i = 0; i < Sessions; i++)
                peers.Add(await ConnectAsync(server, receiveBufferSize: 4 * 1024));
            await Wait.UntilAsync(() => server.Ready.Count == Sessions, "the sessions to connect");

            var payload = Framing.Pattern(0, Message);
            var rentedBefore = pool.RentedBytes;
            for (var i = 0; i < Messages; i++)
                Assert.True(server.Multicast(payload));
            var rented = pool.RentedBytes - rentedBefore;

            var reads = peers.Select(peer => Wait.ReadExactlyAsync(peer, Messages * Message)).ToArray();
            foreach (var data in await Task.WhenAll(reads).WaitAsync(Wait.Default))
                Assert.Equal(Enumerable.Repeat(payload, Messages).SelectMany(static b => b), data);

            // One copy per multicast; a copy per session would be four times as much.
            Assert.True(rented < 2L * Messages * Message, $"{Messages} multicasts of {Message} bytes to {Sessions} sessions rented {rented} bytes.");
        }
        finally
        {
            foreach (var peer in peers)
                peer.Dispose();
        }
    }

    [Fact]
    public async Task MulticastAsync_goes_through_the_override_too()
    {
        using var server = new MixedServer(overriding: 1);
        Assert.True(server.Start());
        using var peer = await ConnectAsync(server);
        await Wait.UntilAsync(() => server.Ready.Count == 1, "the session to connect");
        var counting = (SpanCountingSession)server.Ready.Single();

        var payload = Framing.Pattern(0, 100);
        var read = Wait.ReadExactlyAsync(peer, 5 * payload.Length);
        for (var i = 0; i < 5; i++)
            Assert.True(await server.MulticastAsync(payload));

        Assert.Equal(Enumerable.Repeat(payload, 5).SelectMany(static b => b), await read);
        Assert.Equal(5, counting.Calls);
    }

    public static TheoryData<string, string> Routes => new()
    {
        { nameof(ProbeTcpSession), nameof(MulticastRoute.SharedCopy) },
        { nameof(CapSession), nameof(MulticastRoute.ArrayOverride) },
        { nameof(InheritedCapSession), nameof(MulticastRoute.ArrayOverride) },
        { nameof(SpanCountingSession), nameof(MulticastRoute.SpanOverride) },
        { nameof(BothOverridesSession), nameof(MulticastRoute.SpanOverride) },
        { nameof(WholeArrayOverrideSession), nameof(MulticastRoute.SharedCopy) },
    };

    [Theory]
    [MemberData(nameof(Routes))]
    public void The_route_is_the_override_NetCoreServer_would_call(string sessionType, string expected)
    {
        var tcp = new TcpServer(IPAddress.Loopback, 0);
        StreamSession session = sessionType switch
        {
            nameof(ProbeTcpSession) => new ProbeTcpSession(tcp, new Probe()),
            nameof(CapSession) => new CapSession(tcp),
            nameof(InheritedCapSession) => new InheritedCapSession(tcp),
            nameof(SpanCountingSession) => new SpanCountingSession(tcp),
            nameof(BothOverridesSession) => new BothOverridesSession(tcp),
            nameof(WholeArrayOverrideSession) => new WholeArrayOverrideSession(tcp),
            _ => throw new ArgumentOutOfRangeException(nameof(sessionType)),
        };

        Assert.Equal(expected, session.MulticastRoute.ToString());
        Assert.Equal(expected, session.MulticastRoute.ToString()); // the cached answer agrees
    }

    private static async Task<Socket> ConnectAsync(TcpServer server, int? receiveBufferSize = null)
    {
        var peer = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        if (receiveBufferSize is { } size)
            peer.ReceiveBufferSize = size;
        await peer.ConnectAsync(server.Endpoint);
        return peer;
    }

    private sealed class CappedServer() : TcpServer(IPAddress.Loopback, 0)
    {
        public TaskCompletionSource<CapSession> Connected { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        protected override TcpSession CreateSession() => new CapSession(this);

        protected override void OnConnected(TcpSession session) => Connected.TrySetResult((CapSession)session);
    }

    /// <summary>The shape of NetCoreServer's multicast benchmark session: refuse what would take more than 1 MiB pending.</summary>
    private class CapSession(TcpServer server) : TcpSession(server)
    {
        public const long Limit = 1024 * 1024;

        private long _refused;

        public long Refused => Interlocked.Read(ref _refused);

        public override bool SendAsync(byte[] buffer, long offset, long size)
        {
            if (BytesPending + size > Limit)
            {
                Interlocked.Increment(ref _refused);
                return false;
            }

            return base.SendAsync(buffer, offset, size);
        }
    }

    /// <summary>Creates <c>overriding</c> sessions from <c>create</c> (span-counting ones by default) first, plain ones after.</summary>
    private sealed class MixedServer(int overriding, Func<TcpServer, TcpSession>? create = null) : TcpServer(IPAddress.Loopback, 0)
    {
        private int _created;

        public ConcurrentBag<TcpSession> Ready { get; } = [];

        protected override TcpSession CreateSession() =>
            Interlocked.Increment(ref _created) > overriding ? new ProbeTcpSession(this, new Probe())
            : create is null ? new SpanCountingSession(this)
            : create(this);

        protected override void OnConnected(TcpSession session) => Ready.Add(session);
    }

    private sealed class SpanCountingSession(TcpServer server) : TcpSession(server)
    {
        private readonly ConcurrentQueue<byte[]> _seen = new();
        private int _calls;

        public int Calls => Volatile.Read(ref _calls);

        public bool SawOnlyPayload(byte[] payload) => _seen.All(seen => seen.AsSpan().SequenceEqual(payload));

        public override bool SendAsync(ReadOnlySpan<byte> buffer)
        {
            Interlocked.Increment(ref _calls);
            _seen.Enqueue(buffer.ToArray());
            return base.SendAsync(buffer);
        }
    }

    private sealed class InheritedCapSession(TcpServer server) : CapSession(server);

    private sealed class BothOverridesSession(TcpServer server) : TcpSession(server)
    {
        public override bool SendAsync(ReadOnlySpan<byte> buffer) => base.SendAsync(buffer);

        public override bool SendAsync(byte[] buffer, long offset, long size) => base.SendAsync(buffer, offset, size);
    }

    /// <summary>NetCoreServer's multicast never calls <c>SendAsync(byte[])</c>, so overriding it alone changes nothing.</summary>
    private sealed class WholeArrayOverrideSession(TcpServer server) : TcpSession(server)
    {
        public override bool SendAsync(byte[] buffer) => base.SendAsync(buffer);
    }
}
