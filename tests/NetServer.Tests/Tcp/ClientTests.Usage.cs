using System;
using System.Collections.Concurrent;
using System.IO;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Tcp;

/// <summary>Disconnects, sends, host names, state flags and statistics.</summary>
public partial class ClientTests
{
    // --- Disconnect variants ---

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Disconnect_variants_end_the_connection_once_with_LocalDisconnect(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        Assert.True(harness.Start());

        // Disconnect(): returns after OnDisconnected has run.
        var probe1 = new Probe();
        using var client1 = harness.CreateClient(probe1);
        Assert.True(await client1.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout));
        Assert.True(client1.Disconnect());
        Assert.Equal(1, probe1.DisconnectedCount);
        Assert.Equal(DisconnectReason.LocalDisconnect, client1.DisconnectReason);
        Assert.False(client1.Disconnect());
        Assert.False(client1.DisconnectAsync());
        Assert.False(await client1.DisconnectAsync(CancellationToken.None));

        // DisconnectAsync(): returns at once; OnDisconnected follows.
        var probe2 = new Probe();
        using var client2 = harness.CreateClient(probe2);
        Assert.True(await client2.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout));
        Assert.True(client2.DisconnectAsync());
        Assert.Equal(DisconnectReason.LocalDisconnect, await probe2.DisconnectedSignal.Task.WaitAsync(s_timeout));
        Assert.False(client2.DisconnectAsync());

        // await DisconnectAsync(token): completes after OnDisconnected.
        var probe3 = new Probe();
        using var client3 = harness.CreateClient(probe3);
        Assert.True(await client3.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout));
        Assert.True(await client3.DisconnectAsync(CancellationToken.None).WaitAsync(s_timeout));
        Assert.Equal(1, probe3.DisconnectedCount);
        Assert.Equal(DisconnectReason.LocalDisconnect, client3.DisconnectReason);

        foreach (var probe in new[] { probe1, probe2, probe3 })
        {
            Assert.Equal(s_connectionEvents, probe.Events);
            Assert.Equal(1, probe.DisconnectedCount);
        }

        // The server sees each peer close its side.
        await Wait.UntilAsync(() => harness.Probe.Sessions.Count == 3 && harness.ConnectedSessions == 0, "the server to accept and drop all three sessions");
        var serverReasons = await Task.WhenAll(harness.Probe.Sessions.Values.Select(static p => p.DisconnectedSignal.Task)).WaitAsync(s_timeout);
        Assert.Equal(3, serverReasons.Length);
        Assert.All(serverReasons, static r => Assert.Equal(DisconnectReason.PeerClosed, r));
    }

    [Theory]
    [MemberData(nameof(Transports.Plain), MemberType = typeof(Transports))]
    public async Task DisconnectAsync_cancelled_while_queued_bytes_cannot_drain_closes_at_once(TransportKind kind)
    {
        using var peer = new ClosedEndpoint(kind, listen: true);
        var probe = new Probe();
        using var client = peer.CreateClient(probe);
        client.OptionDisconnectTimeout = Timeout.InfiniteTimeSpan;
        Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout));
        using var accepted = await peer.Listener.AcceptAsync().WaitAsync(s_timeout);

        // The peer never reads: fill the kernel buffers (their size varies) until an async send
        // waits; the queue then cannot drain and a graceful close would wait forever.
        var chunk = new ReadOnlyMemory<byte>(new byte[1024 * 1024]);
        Task<bool>? parked = null;
        for (var i = 0; i < 64 && client.BytesSending == 0; i++)
        {
            var send = client.SendAsync(chunk);
            if (!send.IsCompleted)
            {
                parked = send.AsTask();
                break;
            }

            Assert.True(await send);
        }

        await Wait.UntilAsync(() => client.BytesSending > 0, "an async send to wait for the kernel");
        Assert.True(client.BytesPending > 0);

        using var cts = new CancellationTokenSource(TimeSpan.FromMilliseconds(200));
        Assert.True(await client.DisconnectAsync(cts.Token).WaitAsync(s_timeout));
        Assert.Equal(1, probe.DisconnectedCount);
        Assert.Equal(DisconnectReason.LocalDisconnect, client.DisconnectReason);
        Assert.False(client.IsConnected);
        Assert.Empty(Errors(probe));
        if (parked is not null)
            Assert.False(await parked.WaitAsync(s_timeout));
        await peer.Pool.AssertAllReturnedAsync();
    }

    // --- Sends ---

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Blocking_Send_returns_the_byte_count_and_text_is_sent_as_UTF8(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        var received = new MemoryStream();
        harness.Probe.ConfigureSession = p => p.Received = (_, buffer, offset, size) =>
        {
            lock (received)
                received.Write(buffer, (int)offset, (int)size);
        };
        Assert.True(harness.Start());
        var probe = new Probe();
        using var client = harness.CreateClient(probe);
        Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout));

        var bytes = Enumerable.Range(0, 100).Select(static i => (byte)i).ToArray();
        var expected = new MemoryStream();

        // The blocking send returns once the OS has taken the bytes, so BytesSent already counts them.
        Assert.Equal(100, await Task.Run(() => client.Send(bytes)).WaitAsync(s_timeout));
        Assert.Equal(100, client.BytesSent);
        expected.Write(bytes);
        Assert.Equal(10, await Task.Run(() => client.Send(bytes, 5, 10)).WaitAsync(s_timeout));
        expected.Write(bytes, 5, 10);
        Assert.Equal(3, await Task.Run(() => client.Send(new ReadOnlySpan<byte>(bytes, 20, 3))).WaitAsync(s_timeout));
        expected.Write(bytes, 20, 3);
        Assert.Equal(6, await Task.Run(() => client.Send("h\u00e9llo")).WaitAsync(s_timeout));
        expected.Write(Encoding.UTF8.GetBytes("h\u00e9llo"));
        Assert.Equal(3, await Task.Run(() => client.Send("\u20ac".AsSpan())).WaitAsync(s_timeout));
        expected.Write(Encoding.UTF8.GetBytes("\u20ac"));
        Assert.True(client.SendAsync("\u00fc"));
        expected.Write(Encoding.UTF8.GetBytes("\u00fc"));
        Assert.True(client.SendAsync("\u2713".AsSpan()));
        expected.Write(Encoding.UTF8.GetBytes("\u2713"));

        var all = expected.ToArray();

        // BytesReceived counts a read before OnReceived runs: wait for the hook to have seen it all.
        await Wait.UntilAsync(() => { lock (received) return received.Length >= all.Length; }, $"the server to receive {all.Length} bytes");
        Assert.Equal(all.Length, harness.BytesReceived);
        lock (received)
            Assert.Equal(all, received.ToArray());
        Assert.Equal(all.Length, client.BytesSent);
        Assert.Equal(0, client.BytesPending);
    }

    // --- Host names, state flags, statistics ---

    [Fact]
    public async Task TcpClient_connects_to_a_host_name()
    {
        await using var harness = new ServerHarness(TransportKind.Tcp);
        harness.Probe.ConfigureSession = Echo;
        Assert.True(harness.Start());
        var port = ((IPEndPoint)harness.Endpoint).Port;

        var probe = new Probe();
        using var client = new RecordingTcpClient(new DnsEndPoint("localhost", port), probe) { BufferPool = harness.Pool };
        Assert.Equal("localhost", client.Address);
        Assert.Equal(port, client.Port);
        Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout));
        Assert.True(client.SendAsync("ping"));
        await Wait.UntilAsync(() => probe.ReceivedBytes == 4, "the echo over the host-name connection");
        Assert.True(client.Disconnect());

        // The synchronous connect resolves too, and so does the (string, int) constructor.
        Assert.True(await Task.Run(client.Connect).WaitAsync(s_timeout));
        Assert.True(client.Disconnect());
        using var plain = new TcpClient("localhost", port);
        Assert.True(await Task.Run(plain.Connect).WaitAsync(s_timeout));
        Assert.True(plain.IsConnected);
        Assert.True(plain.Disconnect());
    }

    [Fact]
    public async Task IsConnecting_and_IsConnected_follow_the_connection()
    {
        await using var harness = new ServerHarness(TransportKind.Tcp);
        Assert.True(harness.Start());
        var probe = new Probe();
        using var client = new RecordingTcpClient((IPEndPoint)harness.Endpoint, probe) { BufferPool = harness.Pool };
        Assert.False(client.IsConnecting);
        Assert.False(client.IsConnected);

        Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout));
        Assert.True(client.IsConnected);
        Assert.False(client.IsConnecting);
        Assert.True(client.Disconnect());
        Assert.False(client.IsConnected);

        Assert.True(await Task.Run(client.Connect).WaitAsync(s_timeout));
        Assert.True(client.Disconnect());

        string[] cycle =
        [
            "connecting: connecting=True connected=False",
            "connected: connecting=False connected=True",
            "disconnecting: connecting=False connected=False",
            "disconnected: connecting=False connected=False",
        ];
        Assert.Equal(Repeat(cycle, 2), client.States);
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Statistics_start_from_zero_on_each_connection(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        harness.Probe.ConfigureSession = Echo;
        Assert.True(harness.Start());
        var probe = new Probe();
        using var client = harness.CreateClient(probe);

        Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout));
        Assert.True(client.SendAsync(new byte[50]));
        await Wait.UntilAsync(() => client.BytesReceived == 50, "the 50-byte echo");
        Assert.Equal(50, client.BytesSent);
        Assert.True(client.Disconnect());
        Assert.Equal(50, client.BytesSent);

        Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout));
        Assert.Equal(0, client.BytesSent);
        Assert.Equal(0, client.BytesReceived);
        Assert.Equal(0, client.BytesPending);
        Assert.Equal(0, client.BytesSending);
        Assert.True(client.SendAsync(new byte[7]));
        await Wait.UntilAsync(() => client.BytesReceived == 7, "the 7-byte echo");
        Assert.Equal(7, client.BytesSent);
        Assert.True(client.Disconnect());
    }

    /// <summary>A TCP client (IP or host-name endpoint) that forwards hooks to a probe and records its state flags inside each hook.</summary>
    private sealed class RecordingTcpClient : TcpClient
    {
        public RecordingTcpClient(IPEndPoint endpoint, Probe probe)
            : base(endpoint) => Probe = probe;

        public RecordingTcpClient(DnsEndPoint endpoint, Probe probe)
            : base(endpoint) => Probe = probe;

        public Probe Probe { get; }

        public ConcurrentQueue<string> States { get; } = new();

        public Action? Connecting { get; set; }

        private void Record(string hook) => States.Enqueue($"{hook}: connecting={IsConnecting} connected={IsConnected}");

        protected override void OnConnecting()
        {
            Record("connecting");
            Probe.OnConnecting();
            Connecting?.Invoke();
        }

        protected override void OnConnected()
        {
            Record("connected");
            Probe.OnConnected(this);
        }

        protected override void OnDisconnecting()
        {
            Record("disconnecting");
            Probe.OnDisconnecting();
        }

        protected override void OnDisconnected(DisconnectReason reason)
        {
            Record("disconnected");
            Probe.OnDisconnected(this, reason);
        }

        protected override void OnReceived(byte[] buffer, long offset, long size) => Probe.OnReceived(this, buffer, offset, size);

        protected override void OnError(SocketError error) => Probe.OnError(this, error);
    }
}
