using System;
using System.Buffers.Binary;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Buffers;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Udp;

/// <summary>
/// The two I/O modes of a UDP socket (docs/udp.md): every guarantee holds in both unless a mode
/// says otherwise, so a test of such a guarantee is a theory over <see cref="UdpModes"/>.
/// </summary>
public enum UdpIo
{
    /// <summary>The default: a receive loop on the thread pool, asynchronous sends.</summary>
    Async,

    /// <summary><see cref="UdpPeer.OptionDedicatedThread"/>: a receive thread of the socket's own, blocking sends.</summary>
    DedicatedThread,
}

/// <summary>Theory data over the I/O modes, alone or crossed with a test's own cases.</summary>
public static class UdpModes
{
    public static TheoryData<UdpIo> All => new() { UdpIo.Async, UdpIo.DedicatedThread };

    /// <summary>Each of <paramref name="cases"/> in each mode.</summary>
    public static TheoryData<UdpIo, T> Each<T>(params T[] cases)
    {
        var data = new TheoryData<UdpIo, T>();
        foreach (var io in Enum.GetValues<UdpIo>())
        {
            foreach (var item in cases)
                data.Add(io, item);
        }

        return data;
    }

    /// <summary>Each pair of <paramref name="cases"/> in each mode.</summary>
    public static TheoryData<UdpIo, T1, T2> Each<T1, T2>(params (T1, T2)[] cases)
    {
        var data = new TheoryData<UdpIo, T1, T2>();
        foreach (var io in Enum.GetValues<UdpIo>())
        {
            foreach (var (first, second) in cases)
                data.Add(io, first, second);
        }

        return data;
    }
}

/// <summary>
/// Records every hook of one UDP server or client and lets a test plug behaviour into them.
/// Lifecycle hooks go to <see cref="Events"/> in the order they ran; datagrams, sends and errors
/// to their own queues. A hook that runs after the final one (OnStopped, OnDisconnected) is kept
/// in <see cref="LateHook"/>, and OnReceived running inside another OnReceived sets
/// <see cref="ReceivedOverlapped"/>.
/// </summary>
internal sealed class UdpProbe
{
    private int _inReceived;
    private int _finished;
    private long _sentCount;
    private long _receivedCount;

    public ConcurrentQueue<string> Events { get; } = new();

    /// <summary>Copies of the datagrams delivered, with their senders (unless <see cref="KeepDatagrams"/> is off).</summary>
    public ConcurrentQueue<(EndPoint From, byte[] Data)> Received { get; } = new();

    /// <summary>The sizes OnSent reported, in the order it ran.</summary>
    public ConcurrentQueue<long> SentSizes { get; } = new();

    public ConcurrentQueue<SocketError> Errors { get; } = new();

    public ConcurrentQueue<Exception> HandlerErrors { get; } = new();

    /// <summary>Copy every datagram into <see cref="Received"/> (turn off for floods that only count).</summary>
    public bool KeepDatagrams { get; set; } = true;

    /// <summary>Runs in OnStarted (server) or OnConnected (client).</summary>
    public Action<UdpPeer>? Started { get; set; }

    /// <summary>Runs in OnReceived after the datagram was recorded.</summary>
    public Action<UdpPeer, EndPoint, byte[], long, long>? OnReceive { get; set; }

    /// <summary>Runs in OnSent after the size was recorded.</summary>
    public Action<UdpPeer, EndPoint, long>? OnSend { get; set; }

    /// <summary>Runs in OnError(SocketError) after the error was recorded.</summary>
    public Action<UdpPeer, SocketError>? OnFail { get; set; }

    /// <summary>Runs in OnStopped (server) or OnDisconnected (client), after <see cref="Finished"/> is set.</summary>
    public Action<UdpPeer>? Stopped { get; set; }

    /// <summary>Completes when the final hook (OnStopped, OnDisconnected) has run.</summary>
    public TaskCompletionSource Finished { get; private set; } = NewSignal();

    public bool ReceivedOverlapped { get; private set; }

    public string? LateHook { get; private set; }

    public long ReceivedCount => Interlocked.Read(ref _receivedCount);

    public long SentCount => Interlocked.Read(ref _sentCount);

    public int ErrorCount(SocketError error) => Errors.Count(e => e == error);

    /// <summary>Datagrams delivered so far, as text.</summary>
    public List<string> Texts() => Received.Select(r => System.Text.Encoding.UTF8.GetString(r.Data)).ToList();

    /// <summary>Makes the peer an echo: each datagram goes back to its sender, and the next one is asked for.</summary>
    public UdpProbe Echo()
    {
        Started = peer => peer.ReceiveAsync();
        OnReceive = (peer, from, buffer, offset, size) =>
        {
            if (!peer.SendAsync(from, buffer, offset, size))
                Events.Enqueue("echo refused");
            peer.ReceiveAsync();
        };
        return this;
    }

    /// <summary>Asks for one datagram after another (the compatible pattern): ReceiveAsync on start and in each OnReceived.</summary>
    public UdpProbe KeepReceiving()
    {
        Started = peer => peer.ReceiveAsync();
        OnReceive = (peer, _, _, _, _) => peer.ReceiveAsync();
        return this;
    }

    /// <summary>Forgets the final hook, for a peer that is started again.</summary>
    public void Rearm()
    {
        Volatile.Write(ref _finished, 0);
        Finished = NewSignal();
    }

    internal void Lifecycle(string name) => Events.Enqueue(name);

    internal void Start(UdpPeer peer, string name)
    {
        Events.Enqueue(name);
        Started?.Invoke(peer);
    }

    internal void Stop(UdpPeer peer, string name)
    {
        Events.Enqueue(name);
        Volatile.Write(ref _finished, 1);
        Finished.TrySetResult();
        Stopped?.Invoke(peer);
    }

    internal void Receive(UdpPeer peer, EndPoint from, byte[] buffer, long offset, long size)
    {
        CheckNotFinished("OnReceived");
        if (Interlocked.Exchange(ref _inReceived, 1) != 0)
            ReceivedOverlapped = true;
        try
        {
            if (KeepDatagrams)
                Received.Enqueue((from, buffer.AsSpan((int)offset, (int)size).ToArray()));
            Interlocked.Increment(ref _receivedCount);
            OnReceive?.Invoke(peer, from, buffer, offset, size);
        }
        finally
        {
            Volatile.Write(ref _inReceived, 0);
        }
    }

    internal void Send(UdpPeer peer, EndPoint to, long sent)
    {
        CheckNotFinished("OnSent");
        SentSizes.Enqueue(sent);
        Interlocked.Increment(ref _sentCount);
        OnSend?.Invoke(peer, to, sent);
    }

    internal void Fail(UdpPeer peer, SocketError error)
    {
        CheckNotFinished("OnError(" + error + ")");
        Errors.Enqueue(error);
        OnFail?.Invoke(peer, error);
    }

    internal void Fail(Exception exception)
    {
        CheckNotFinished("OnError(Exception)");
        HandlerErrors.Enqueue(exception);
    }

    /// <summary>Fails the test if the peer reported an error it should not have.</summary>
    public void AssertNoErrors()
    {
        Assert.True(Errors.IsEmpty, "OnError: " + string.Join(", ", Errors));
        Assert.True(HandlerErrors.IsEmpty, "OnError(Exception): " + string.Join(Environment.NewLine, HandlerErrors));
    }

    private void CheckNotFinished(string hook)
    {
        if (Volatile.Read(ref _finished) != 0)
            LateHook ??= hook;
    }

    private static TaskCompletionSource NewSignal() => new(TaskCreationOptions.RunContinuationsAsynchronously);
}

/// <summary>A UdpServer whose hooks go to a <see cref="UdpProbe"/>.</summary>
internal sealed class ProbeUdpServer : UdpServer
{
    public ProbeUdpServer(IPEndPoint endpoint, BufferPool pool, UdpProbe? probe = null)
        : base(endpoint)
    {
        BufferPool = pool;
        Probe = probe ?? new UdpProbe();
    }

    public ProbeUdpServer(DnsEndPoint endpoint, BufferPool pool, UdpProbe? probe = null)
        : base(endpoint)
    {
        BufferPool = pool;
        Probe = probe ?? new UdpProbe();
    }

    public UdpProbe Probe { get; }

    /// <summary>The I/O mode, set in an initializer (it sets <see cref="UdpPeer.OptionDedicatedThread"/>).</summary>
    public UdpIo Io
    {
        get => OptionDedicatedThread ? UdpIo.DedicatedThread : UdpIo.Async;
        init => OptionDedicatedThread = value == UdpIo.DedicatedThread;
    }

    public IPEndPoint IPEndpoint => (IPEndPoint)Endpoint;

    protected override void OnStarting() => Probe.Lifecycle("starting");

    protected override void OnStarted() => Probe.Start(this, "started");

    protected override void OnStopping() => Probe.Lifecycle("stopping");

    protected override void OnStopped() => Probe.Stop(this, "stopped");

    protected override void OnReceived(EndPoint endpoint, byte[] buffer, long offset, long size) => Probe.Receive(this, endpoint, buffer, offset, size);

    protected override void OnSent(EndPoint endpoint, long sent) => Probe.Send(this, endpoint, sent);

    protected override void OnError(SocketError error) => Probe.Fail(this, error);

    protected override void OnError(Exception exception) => Probe.Fail(exception);
}

/// <summary>A UdpClient whose hooks go to a <see cref="UdpProbe"/>.</summary>
internal sealed class ProbeUdpClient : UdpClient
{
    public ProbeUdpClient(IPEndPoint endpoint, BufferPool pool, UdpProbe? probe = null)
        : base(endpoint)
    {
        BufferPool = pool;
        Probe = probe ?? new UdpProbe();
    }

    public ProbeUdpClient(DnsEndPoint endpoint, BufferPool pool, UdpProbe? probe = null)
        : base(endpoint)
    {
        BufferPool = pool;
        Probe = probe ?? new UdpProbe();
    }

    public UdpProbe Probe { get; }

    /// <summary>The I/O mode, set in an initializer (it sets <see cref="UdpPeer.OptionDedicatedThread"/>).</summary>
    public UdpIo Io
    {
        get => OptionDedicatedThread ? UdpIo.DedicatedThread : UdpIo.Async;
        init => OptionDedicatedThread = value == UdpIo.DedicatedThread;
    }

    /// <summary>The local endpoint of the open socket.</summary>
    public IPEndPoint LocalEndpoint => (IPEndPoint)Socket!.LocalEndPoint!;

    protected override void OnConnecting() => Probe.Lifecycle("connecting");

    protected override void OnConnected() => Probe.Start(this, "connected");

    protected override void OnDisconnecting() => Probe.Lifecycle("disconnecting");

    protected override void OnDisconnected() => Probe.Stop(this, "disconnected");

    protected override void OnJoinedMulticastGroup(IPAddress address) => Probe.Lifecycle("joined " + address);

    protected override void OnLeftMulticastGroup(IPAddress address) => Probe.Lifecycle("left " + address);

    protected override void OnReceived(EndPoint endpoint, byte[] buffer, long offset, long size) => Probe.Receive(this, endpoint, buffer, offset, size);

    protected override void OnSent(EndPoint endpoint, long sent) => Probe.Send(this, endpoint, sent);

    protected override void OnError(SocketError error) => Probe.Fail(this, error);

    protected override void OnError(Exception exception) => Probe.Fail(exception);
}

/// <summary>
/// A plain UDP socket as the other end of a test: sends exactly what the test says (an empty
/// datagram, one larger than the peer accepts) and shows exactly what arrived.
/// </summary>
internal sealed class RawUdp : IDisposable
{
    public RawUdp(IPAddress address, int receiveBufferSize = UdpTest.LargeBuffer)
    {
        Socket = new Socket(address.AddressFamily, SocketType.Dgram, ProtocolType.Udp) { ReceiveBufferSize = receiveBufferSize };
        Socket.Bind(new IPEndPoint(address, 0));
        Endpoint = (IPEndPoint)Socket.LocalEndPoint!;
    }

    public Socket Socket { get; }

    public IPEndPoint Endpoint { get; }

    /// <summary>Datagrams waiting in the kernel.</summary>
    public int Available => Socket.Available;

    public void Send(EndPoint target, ReadOnlySpan<byte> data) =>
        Assert.Equal(data.Length, Socket.SendTo(data, SocketFlags.None, target));

    public void Send(EndPoint target, string text) => Send(target, System.Text.Encoding.UTF8.GetBytes(text));

    /// <summary>The next datagram (bounded wait; fails the test on timeout).</summary>
    public async Task<(byte[] Data, IPEndPoint From)> ReceiveAsync(string what = "a datagram", TimeSpan? timeout = null)
    {
        var buffer = new byte[UdpPeer.MaxDatagramPayload + 1];
        using var cts = new CancellationTokenSource(timeout ?? Wait.Default);
        try
        {
            var any = new IPEndPoint(Socket.AddressFamily == AddressFamily.InterNetworkV6 ? IPAddress.IPv6Loopback : IPAddress.Loopback, 0);
            var result = await Socket.ReceiveFromAsync(buffer, SocketFlags.None, any, cts.Token);
            return (buffer.AsSpan(0, result.ReceivedBytes).ToArray(), (IPEndPoint)result.RemoteEndPoint);
        }
        catch (OperationCanceledException)
        {
            Assert.Fail($"Timed out waiting for {what} at {Endpoint}.");
            throw;
        }
    }

    /// <summary>The next datagram as text.</summary>
    public async Task<string> ReceiveTextAsync(string what = "a datagram") =>
        System.Text.Encoding.UTF8.GetString((await ReceiveAsync(what)).Data);

    /// <summary>The next <paramref name="count"/> datagrams.</summary>
    public async Task<List<byte[]>> ReceiveManyAsync(int count, string what = "datagrams")
    {
        var all = new List<byte[]>(count);
        for (var i = 0; i < count; i++)
            all.Add((await ReceiveAsync($"{what} ({i} of {count} so far)")).Data);
        return all;
    }

    public void Dispose() => Socket.Dispose();
}

/// <summary>Test data and sizing shared by the UDP tests.</summary>
internal static class UdpTest
{
    /// <summary>SO_RCVBUF asked for by receivers in the tests (the kernel caps it at net.core.rmem_max and doubles it).</summary>
    public const int LargeBuffer = 4 * 1024 * 1024;

    /// <summary>The largest payload of one IPv4 datagram (65,535 less the IPv4 and UDP headers).</summary>
    public const int MaxIPv4Payload = 65507;

    /// <summary>Whether a loop of an I/O service polls the peer's socket (a service given, or NETSERVER_TRANSPORT=loops, on Linux): its hooks then run on the loop, not on the thread pool.</summary>
    public static bool OnLoop(UdpPeer peer) => peer.Channel?.IsPolledByLoop == true;

    public static IPEndPoint Loopback(AddressFamily family) =>
        new(family == AddressFamily.InterNetworkV6 ? IPAddress.IPv6Loopback : IPAddress.Loopback, 0);

    /// <summary>
    /// A random address of 127.0.0.0/8 other than 127.0.0.1, port 0: for a socket that must bind its
    /// port again after a Stop. Between the two binds the port is free, and the tests running
    /// meanwhile bind hundreds of sockets to 127.0.0.1 port 0; on another loopback address none of
    /// them can take it.
    /// </summary>
    public static IPEndPoint RebindableLoopback() => new(new IPAddress(new byte[] { 127, (byte)Random.Shared.Next(1, 255), (byte)Random.Shared.Next(0, 256), (byte)Random.Shared.Next(1, 255) }), 0);

    /// <summary>
    /// How many small datagrams (under 1 KiB) may be on their way to <paramref name="receiver"/>
    /// without the kernel dropping any: each one costs its payload plus about 1 KiB of socket buffer
    /// bookkeeping, and half of the buffer is kept spare. Tests that must not lose datagrams never
    /// have more than this many unread.
    /// </summary>
    public static int Window(Socket receiver) => Math.Clamp(receiver.ReceiveBufferSize / 4096, 8, 1000);

    /// <summary>
    /// A datagram that names itself: <paramref name="id"/> (int32) then a pattern keyed by the id,
    /// so a torn, mixed or corrupted datagram fails <see cref="IdOf"/>.
    /// </summary>
    public static byte[] Datagram(int id, int length)
    {
        Assert.True(length >= 4);
        var data = new byte[length];
        BinaryPrimitives.WriteInt32LittleEndian(data, id);
        Framing.FillPattern(data.AsSpan(4), (long)id << 20);
        return data;
    }

    /// <summary>The id of a datagram made by <see cref="Datagram"/>, after checking every byte of it.</summary>
    public static int IdOf(ReadOnlySpan<byte> data, int expectedLength = -1)
    {
        Assert.True(data.Length >= 4, $"A datagram of {data.Length} bytes is too short to carry an id.");
        if (expectedLength >= 0)
            Assert.Equal(expectedLength, data.Length);
        var id = BinaryPrimitives.ReadInt32LittleEndian(data);
        var body = data[4..];
        for (var i = 0; i < body.Length; i++)
        {
            if (body[i] != Framing.PatternByte(((long)id << 20) + i))
                Assert.Fail($"Datagram {id} ({data.Length} bytes) is corrupt at byte {i + 4}.");
        }

        return id;
    }
}
