using System.Diagnostics;
using NetServer.Udp;

namespace NetServer;

/// <summary>
/// One UDP socket and its datagram engine: what <see cref="UdpServer"/> and <see cref="UdpClient"/>
/// share. Sends never fail because another send is in flight (datagrams queue, within
/// <see cref="OptionSendBufferLimit"/>); receiving delivers one <c>OnReceived</c> per datagram, and
/// calling <see cref="ReceiveAsync"/> from <c>OnReceived</c> is safe at any rate.
/// </summary>
public abstract partial class UdpPeer : IDisposable, IAsyncDisposable
{
    /// <summary>The largest payload a UDP datagram can carry (over IPv6; over IPv4 it is 65,507 bytes).</summary>
    public const int MaxDatagramPayload = 65527;

    /// <summary>The default of <see cref="OptionSendBufferLimit"/>: 4 MiB of queued datagrams.</summary>
    public const int DefaultSendBufferLimit = 4 * 1024 * 1024;

    /// <summary>How long the blocking calls (<c>Stop</c>, <c>Disconnect</c>, <c>Dispose</c>) wait for the engine before returning.</summary>
    internal static readonly TimeSpan BlockingWaitTimeout = TimeSpan.FromSeconds(30);

    private DatagramChannel? _channel;

    // The flusher updates the sent counters and the receive loop the received ones, on two threads
    // at once: each counter on its own cache line, so the two do not slow each other down.
    private PaddedCounter _bytesSent;
    private PaddedCounter _bytesReceived;
    private PaddedCounter _datagramsSent;
    private PaddedCounter _datagramsReceived;
    private int _maxDatagramSize = MaxDatagramPayload;
    private int _receiveBufferSize = 8192;
    private int _sendBufferSize = 8192;
    private bool _receiveBufferSizeSet;
    private bool _sendBufferSizeSet;
    private int _sendBufferLimit = DefaultSendBufferLimit;
    private int _multicastTimeToLive = 1;
    private bool _multicastTimeToLiveSet;
    private bool _multicastLoopback = true;
    private bool _multicastLoopbackSet;
    private int _multicastInterface;

    private protected UdpPeer(EndPoint endpoint)
    {
        if (endpoint is null)
            ThrowHelper.ThrowArgumentNull(nameof(endpoint));
        if (endpoint is not (IPEndPoint or DnsEndPoint))
            throw new ArgumentException("A UDP socket works on an IP or DNS endpoint.", nameof(endpoint));
        Id = Guid.NewGuid();
        Endpoint = endpoint;
    }

    /// <summary>Identifier of this server or client.</summary>
    public Guid Id { get; }

    /// <summary>
    /// Receives the operational events of this server or client (see <see cref="Diagnostics.NetServerEventListener"/>);
    /// null, the default, for none. Set it before <c>Start/Connect</c>.
    /// </summary>
    public Diagnostics.NetServerEventListener? EventListener { get; set; }

    /// <summary>
    /// The endpoint: a server's bound endpoint (after <c>Start</c>, the real port when 0 was asked
    /// for); a client's server endpoint (or, for a multicast client, the endpoint it listens on).
    /// </summary>
    public EndPoint Endpoint { get; private protected set; }

    /// <summary>The IP address (or host name) of <see cref="Endpoint"/>.</summary>
    public string Address => EndPoints.AddressOf(Endpoint);

    /// <summary>The port of <see cref="Endpoint"/>.</summary>
    public int Port => EndPoints.PortOf(Endpoint);

    /// <summary>The socket while started or connected (and the last one afterwards); null before.</summary>
    public Socket? Socket { get; private set; }

    /// <summary>Bytes of datagrams accepted by sends and not yet handed to the operating system.</summary>
    public long BytesPending => Channel?.BytesPending ?? 0;

    /// <summary>Bytes inside a pending socket send right now (a part of <see cref="BytesPending"/>).</summary>
    public long BytesSending => Channel?.BytesSending ?? 0;

    /// <summary>Bytes of datagrams handed to the operating system since the start.</summary>
    public long BytesSent => _bytesSent.Read();

    /// <summary>Bytes of datagrams received since the start.</summary>
    public long BytesReceived => _bytesReceived.Read();

    /// <summary>Datagrams handed to the operating system since the start.</summary>
    public long DatagramsSent => _datagramsSent.Read();

    /// <summary>Datagrams received (and delivered to OnReceived) since the start.</summary>
    public long DatagramsReceived => _datagramsReceived.Read();

    // --- Options (set them before Start or Connect) ---

    /// <summary>On an IPv6 endpoint, also send to and receive from IPv4 peers (IPv4-mapped addresses).</summary>
    public bool OptionDualMode { get; set; }

    /// <summary>Allow another socket to bind the same address and port (SO_REUSEADDR), as several multicast listeners on one host need.</summary>
    public bool OptionReuseAddress { get; set; }

    /// <summary>Forbid other sockets from binding the same address (Windows' SO_EXCLUSIVEADDRUSE).</summary>
    public bool OptionExclusiveAddressUse { get; set; }

    /// <summary>Allow sending to broadcast addresses (SO_BROADCAST); without it the system refuses them (OnError: AccessDenied).</summary>
    public bool OptionBroadcast { get; set; }

    /// <summary>
    /// Keep receiving from <c>Start</c>/<c>Connect</c> on, without calling <see cref="ReceiveAsync"/>
    /// after each datagram (default false: as in NetCoreServer, each <see cref="ReceiveAsync"/> asks for one datagram).
    /// </summary>
    public bool OptionAutoReceive { get; set; }

    /// <summary>
    /// Run the socket with blocking calls only: a thread of its own receives (as
    /// <see cref="OptionAutoReceive"/> or each <see cref="ReceiveAsync"/> asks), and sends are
    /// blocking calls made from the sender's bytes. The fastest way to move many small datagrams:
    /// the default, asynchronous calls, waits on the runtime's socket event loop and the thread pool
    /// for every wake-up. It costs one thread per socket, and a send may wait briefly while the
    /// kernel's send buffer is full. Default false; set it before <c>Start</c>/<c>Connect</c>.
    /// </summary>
    public bool OptionDedicatedThread { get; set; }

    /// <summary>
    /// The largest datagram delivered, in bytes (default and most: <see cref="MaxDatagramPayload"/>).
    /// A larger one is not delivered: OnError reports <see cref="SocketError.MessageSize"/> and
    /// receiving goes on. It is also the size of the one receive buffer the socket holds while it receives.
    /// </summary>
    public int OptionMaxDatagramSize
    {
        get => _maxDatagramSize;
        set
        {
            if (value is < 1 or > MaxDatagramPayload)
                ThrowHelper.ThrowArgumentOutOfRange(nameof(OptionMaxDatagramSize), $"The size must be between 1 and {MaxDatagramPayload}.");
            _maxDatagramSize = value;
        }
    }

    /// <summary>The compatible name of <see cref="OptionMaxDatagramSize"/> (0 sets the default, <see cref="MaxDatagramPayload"/>).</summary>
    public int OptionReceiveBufferLimit
    {
        get => _maxDatagramSize;
        set => OptionMaxDatagramSize = ThrowHelper.ValidateOption(value, zeroAllowed: true, nameof(OptionReceiveBufferLimit)) == 0 ? MaxDatagramPayload : value;
    }

    /// <summary>
    /// SO_RCVBUF: how many bytes of datagrams the kernel keeps for the socket before it drops new
    /// ones (default 8192 as in NetCoreServer, but applied only when set: the kernel's own default is larger).
    /// </summary>
    public int OptionReceiveBufferSize
    {
        get => _receiveBufferSize;
        set
        {
            _receiveBufferSize = ThrowHelper.ValidateOption(value, zeroAllowed: false, nameof(OptionReceiveBufferSize));
            _receiveBufferSizeSet = true;
        }
    }

    /// <summary>SO_SNDBUF (default 8192; applied only when set, like <see cref="OptionReceiveBufferSize"/>).</summary>
    public int OptionSendBufferSize
    {
        get => _sendBufferSize;
        set
        {
            _sendBufferSize = ThrowHelper.ValidateOption(value, zeroAllowed: false, nameof(OptionSendBufferSize));
            _sendBufferSizeSet = true;
        }
    }

    /// <summary>
    /// Most bytes of datagrams that may wait in the send queue (default <see cref="DefaultSendBufferLimit"/>;
    /// 0 = no limit); each queued datagram also counts 64 bytes of bookkeeping. A datagram that does
    /// not fit is refused: <c>SendAsync</c> returns false and OnError reports
    /// <see cref="SocketError.NoBufferSpaceAvailable"/>; the awaitable <c>SendAsync</c> waits for room instead.
    /// </summary>
    public int OptionSendBufferLimit
    {
        get => _sendBufferLimit;
        set => _sendBufferLimit = ThrowHelper.ValidateOption(value, zeroAllowed: true, nameof(OptionSendBufferLimit));
    }

    /// <summary>Hops a multicast datagram sent by this socket may travel (IP_MULTICAST_TTL / IPV6_MULTICAST_HOPS; default 1, the local network).</summary>
    public int OptionMulticastTimeToLive
    {
        get => _multicastTimeToLive;
        set
        {
            if (value is < 0 or > 255)
                ThrowHelper.ThrowArgumentOutOfRange(nameof(OptionMulticastTimeToLive), "The time to live must be between 0 and 255.");
            _multicastTimeToLive = value;
            _multicastTimeToLiveSet = true;
        }
    }

    /// <summary>Whether multicast datagrams this socket sends also reach listeners on this host (default true).</summary>
    public bool OptionMulticastLoopback
    {
        get => _multicastLoopback;
        set
        {
            _multicastLoopback = value;
            _multicastLoopbackSet = true;
        }
    }

    /// <summary>
    /// The index of the network interface multicast goes through: the one datagrams are sent on, and
    /// the one groups are joined on (0, the default, lets the system choose). See
    /// <c>NetworkInterface.GetIPProperties().GetIPv4Properties().Index</c> (or IPv6) for an interface's index.
    /// </summary>
    public int OptionMulticastInterface
    {
        get => _multicastInterface;
        set => _multicastInterface = ThrowHelper.ValidateOption(value, zeroAllowed: true, nameof(OptionMulticastInterface));
    }

    internal long EffectiveSendLimit => _sendBufferLimit == 0 ? long.MaxValue : _sendBufferLimit;

    /// <summary>The pool every buffer of this socket comes from (tests swap in a leak-checking pool).</summary>
    internal BufferPool BufferPool { get; set; } = BufferPool.Shared;

    /// <summary>The engine of the open socket, if any.</summary>
    internal DatagramChannel? Channel => Volatile.Read(ref _channel);

    // --- Socket set-up, shared by Start and Connect ---

    /// <summary>The endpoint the socket is about to use (a resolved host name), for <see cref="CreateSocket"/>.</summary>
    private protected EndPoint SocketEndpoint { get; set; } = null!;

    /// <summary>Creates the socket for <c>Start</c> or <c>Connect</c>; override to prepare a special socket.</summary>
    protected virtual Socket CreateSocket() => new(SocketEndpoint.AddressFamily, SocketType.Dgram, ProtocolType.Udp);

    /// <summary>Applies the options that must precede bind.</summary>
    private protected void ConfigureSocket(Socket socket)
    {
        if (socket.AddressFamily == AddressFamily.InterNetworkV6)
            socket.DualMode = OptionDualMode;
        if (OptionReuseAddress)
            socket.SetSocketOption(SocketOptionLevel.Socket, SocketOptionName.ReuseAddress, true);
        if (OptionExclusiveAddressUse)
            socket.ExclusiveAddressUse = true;
        if (OptionBroadcast)
            socket.EnableBroadcast = true;
        if (_receiveBufferSizeSet)
            socket.ReceiveBufferSize = _receiveBufferSize;
        if (_sendBufferSizeSet)
            socket.SendBufferSize = _sendBufferSize;

        var level = socket.AddressFamily == AddressFamily.InterNetworkV6 ? SocketOptionLevel.IPv6 : SocketOptionLevel.IP;
        if (_multicastTimeToLiveSet)
            socket.SetSocketOption(level, SocketOptionName.MulticastTimeToLive, _multicastTimeToLive);
        if (_multicastLoopbackSet)
            socket.SetSocketOption(level, SocketOptionName.MulticastLoopback, _multicastLoopback);
        if (_multicastInterface != 0)
        {
            // IPv4 takes the index in network byte order in the place of an address (0.0.0.x), IPv6 takes it as is.
            socket.SetSocketOption(level, SocketOptionName.MulticastInterface,
                level == SocketOptionLevel.IP ? IPAddress.HostToNetworkOrder(_multicastInterface) : _multicastInterface);
        }
    }

    /// <summary>Starts the engine on a bound socket: counters from zero, receiving at once with <see cref="OptionAutoReceive"/>.</summary>
    private protected DatagramChannel Open(Socket socket)
    {
        _bytesSent.Reset();
        _bytesReceived.Reset();
        _datagramsSent.Reset();
        _datagramsReceived.Reset();
        var channel = new DatagramChannel(this, socket, BufferPool);
        Socket = socket;
        Volatile.Write(ref _channel, channel);
        return channel;
    }

    /// <summary>Called by the engine exactly once per socket, after every other hook of it: raise the final hook (OnStopped, OnDisconnected).</summary>
    internal abstract void OnChannelFinished(DatagramChannel channel);

    /// <summary>Runs a lifecycle hook of the subclass inside a callback scope; what it throws goes to the caller of Start/Stop/Connect/Disconnect.</summary>
    private protected static void RunHook(Action<UdpPeer> hook, UdpPeer target) =>
        RunHook(static (self, hook) => hook(self), target, hook);

    /// <summary>As <see cref="RunHook(Action{UdpPeer}, UdpPeer)"/>, with an argument for the hook.</summary>
    private protected static void RunHook<TState>(Action<UdpPeer, TState> hook, UdpPeer target, TState state)
    {
        CallbackScope.Enter();
        try
        {
            hook(target, state);
        }
        finally
        {
            CallbackScope.Exit();
        }
    }

    // --- Statistics and hook dispatch from the engine ---

    internal void CountSent(int bytes)
    {
        _bytesSent.Add(bytes);
        _datagramsSent.Increment();
    }

    internal void CountReceived(int bytes)
    {
        _bytesReceived.Add(bytes);
        _datagramsReceived.Increment();
    }

    internal void InvokeSent(EndPoint endpoint, int sent) => OnSent(endpoint, sent);

    internal void InvokeError(SocketError error) => OnError(error);

    /// <summary>A hook threw: report it through OnError(Exception); if that throws too, the trace is what is left.</summary>
    internal void ReportHandlerFailure(Exception exception)
    {
        CallbackScope.Enter();
        try
        {
            OnError(exception);
        }
        catch (Exception e)
        {
            Trace.TraceError("NetServer: {0} failed while handling {1}", e, exception);
        }
        finally
        {
            CallbackScope.Exit();
        }
    }

    // --- Dispose ---

    /// <summary>True once disposed.</summary>
    public bool IsDisposed { get; private set; }

    /// <summary>True when there is no open socket.</summary>
    public bool IsSocketDisposed => Channel is not { IsOpen: true };

    /// <summary>Stops the server or disconnects the client, waiting as <c>Stop</c>/<c>Disconnect</c> do.</summary>
    public void Dispose()
    {
        Dispose(true);
        GC.SuppressFinalize(this);
    }

    /// <summary>Closes the socket when <paramref name="disposingManagedResources"/> is true.</summary>
    protected virtual void Dispose(bool disposingManagedResources)
    {
        if (IsDisposed)
            return;
        IsDisposed = true;
        if (disposingManagedResources)
            CloseForDispose();
    }

    /// <summary>Stops the server or disconnects the client without blocking; completes after the final hook.</summary>
    public async ValueTask DisposeAsync()
    {
        if (!IsDisposed)
        {
            IsDisposed = true;
            await CloseForDisposeAsync().ConfigureAwait(false);
        }

        GC.SuppressFinalize(this);
    }

    /// <summary>Stop (server) or Disconnect (client).</summary>
    private protected abstract void CloseForDispose();

    /// <summary>StopAsync (server) or DisconnectAsync (client).</summary>
    private protected abstract Task CloseForDisposeAsync();
}
