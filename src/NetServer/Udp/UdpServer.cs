using NetServer.Udp;

namespace NetServer;

/// <summary>
/// A UDP server: a socket bound to an endpoint that receives datagrams from any sender and sends
/// datagrams to any endpoint, and (started with a multicast endpoint) multicasts. Subclass it,
/// override <c>OnReceived</c>, call <c>Start()</c>, then <c>ReceiveAsync()</c> for each datagram
/// wanted, or set <see cref="UdpPeer.OptionAutoReceive"/> to receive them all.
/// </summary>
public partial class UdpServer : UdpPeer
{
    private const int LifecycleStopped = 0;
    private const int LifecycleStarting = 1;
    private const int LifecycleStarted = 2;
    private const int LifecycleStopping = 3;

    private int _lifecycle;

    /// <summary>A server on <paramref name="address"/>:<paramref name="port"/> (port 0 picks a free port).</summary>
    public UdpServer(IPAddress address, int port)
        : this(new IPEndPoint(address, port))
    {
    }

    /// <summary>A server on an IP address or host name given as text.</summary>
    public UdpServer(string address, int port)
        : base(EndPoints.Parse(address, port))
    {
    }

    /// <summary>A server on a host name, resolved when it starts.</summary>
    public UdpServer(DnsEndPoint endpoint)
        : base(endpoint)
    {
    }

    /// <summary>A server on <paramref name="endpoint"/>.</summary>
    public UdpServer(IPEndPoint endpoint)
        : base(endpoint)
    {
    }

    /// <summary>Where <c>Multicast</c> sends: the endpoint given to <see cref="Start(EndPoint)"/> (resolved); null without one.</summary>
    public EndPoint? MulticastEndpoint { get; private set; }

    /// <summary>True between a successful <see cref="Start()"/> and <see cref="Stop"/>.</summary>
    public bool IsStarted => Volatile.Read(ref _lifecycle) == LifecycleStarted;

    // --- Start / stop ---

    /// <summary>Binds the socket to <see cref="UdpPeer.Endpoint"/> and starts; receiving begins with <c>ReceiveAsync()</c> (or at once with <see cref="UdpPeer.OptionAutoReceive"/>).</summary>
    /// <returns>True if started; false if already started (or being started or stopped).</returns>
    /// <exception cref="SocketException">The endpoint cannot be bound (for example, it is in use).</exception>
    public virtual bool Start()
    {
        // The lifecycle moves by compare-and-swap, so no lock is held while the hooks run.
        if (Interlocked.CompareExchange(ref _lifecycle, LifecycleStarting, LifecycleStopped) != LifecycleStopped)
            return false;

        DatagramChannel channel;
        try
        {
            RunHook(static self => ((UdpServer)self).OnStarting(), this);
            if (MulticastEndpoint is { } multicast)
                MulticastEndpoint = EndPoints.Resolve(multicast);
            SocketEndpoint = EndPoints.Resolve(Endpoint);
            var socket = CreateSocket();
            try
            {
                ConfigureSocket(socket);
                socket.Bind(SocketEndpoint);
            }
            catch
            {
                socket.Dispose();
                throw;
            }

            Endpoint = socket.LocalEndPoint ?? SocketEndpoint;
            channel = Open(socket);
            Volatile.Write(ref _lifecycle, LifecycleStarted);
            DiagnoseStarted();
        }
        catch
        {
            Volatile.Write(ref _lifecycle, LifecycleStopped);
            throw;
        }

        try
        {
            RunHook(static self => ((UdpServer)self).OnStarted(), this);
        }
        finally
        {
            channel.FinishOpening(); // a stop of the socket's loop during the start closes it only now
        }

        if (OptionAutoReceive)
            channel.RequestReceive();
        return true;
    }

    /// <summary>Starts (see <see cref="Start()"/>) with a multicast endpoint for <c>Multicast</c>.</summary>
    /// <returns>True if started; false if already started.</returns>
    public virtual bool Start(IPAddress multicastAddress, int multicastPort) => Start(new IPEndPoint(multicastAddress, multicastPort));

    /// <summary>Starts (see <see cref="Start()"/>) with a multicast endpoint for <c>Multicast</c>, given as text.</summary>
    /// <returns>True if started; false if already started.</returns>
    public virtual bool Start(string multicastAddress, int multicastPort) => Start(EndPoints.Parse(multicastAddress, multicastPort));

    /// <summary>Starts (see <see cref="Start()"/>) with a multicast endpoint for <c>Multicast</c>.</summary>
    /// <returns>True if started; false if already started.</returns>
    public virtual bool Start(EndPoint multicastEndpoint)
    {
        if (multicastEndpoint is null)
            ThrowHelper.ThrowArgumentNull(nameof(multicastEndpoint));
        if (IsStarted)
            return false;
        MulticastEndpoint = multicastEndpoint;
        return Start();
    }

    /// <summary>
    /// Stops: raises OnStopping, closes the socket (queued datagrams are dropped) and returns after
    /// OnStopped, which comes after every other hook of the socket. From inside a NetServer hook it
    /// does not wait: OnStopped follows once the running hooks have returned.
    /// </summary>
    /// <returns>True if stopped; false if not started.</returns>
    public virtual bool Stop()
    {
        if (BeginStop() is not { } channel)
            return false;
        channel.WaitForFinish(BlockingWaitTimeout);
        return true;
    }

    /// <summary>Stops like <see cref="Stop"/> without blocking; completes after OnStopped.</summary>
    /// <returns>True if stopped; false if not started.</returns>
    public async Task<bool> StopAsync()
    {
        if (BeginStop() is not { } channel)
            return false;
        await channel.WhenFinished().ConfigureAwait(false);
        return true;
    }

    private DatagramChannel? BeginStop()
    {
        if (Interlocked.CompareExchange(ref _lifecycle, LifecycleStopping, LifecycleStarted) != LifecycleStarted)
            return null;
        var channel = Channel!;
        RunHook(static self => ((UdpServer)self).OnStopping(), this);
        channel.Close();
        return channel;
    }

    /// <summary>Stops, then starts again (on the same endpoint, with the same multicast endpoint).</summary>
    /// <returns>True if the server was started again.</returns>
    public virtual bool Restart() => Stop() && Start();

    internal override void OnChannelFinished(DatagramChannel channel)
    {
        DiagnoseStopped();

        // Stopped before OnStopped runs, so the hook may start the server again.
        Volatile.Write(ref _lifecycle, LifecycleStopped);
        RunHook(static self => ((UdpServer)self).OnStopped(), this);
    }

    private protected override void CloseForDispose() => Stop();

    private protected override Task CloseForDisposeAsync() => StopAsync();

    // --- Multicast: a datagram to the multicast endpoint ---

    /// <summary>Sends a datagram to <see cref="MulticastEndpoint"/> and waits until the operating system has taken it.</summary>
    /// <returns>The datagram's size once sent; 0 if not started, refused or failed.</returns>
    /// <exception cref="InvalidOperationException">The server was started without a multicast endpoint.</exception>
    public virtual long Multicast(byte[] buffer) => Send(MulticastTarget, buffer);

    /// <summary>Sends part of <paramref name="buffer"/> as one datagram to <see cref="MulticastEndpoint"/> and waits until the operating system has taken it.</summary>
    /// <returns>The datagram's size once sent; 0 if not started, refused or failed.</returns>
    /// <exception cref="InvalidOperationException">The server was started without a multicast endpoint.</exception>
    public virtual long Multicast(byte[] buffer, long offset, long size) => Send(MulticastTarget, buffer, offset, size);

    /// <summary>Sends a datagram to <see cref="MulticastEndpoint"/> and waits until the operating system has taken it.</summary>
    /// <returns>The datagram's size once sent; 0 if not started, refused or failed.</returns>
    /// <exception cref="InvalidOperationException">The server was started without a multicast endpoint.</exception>
    public virtual long Multicast(ReadOnlySpan<byte> buffer) => Send(MulticastTarget, buffer);

    /// <summary>Sends <paramref name="text"/> as one UTF-8 datagram to <see cref="MulticastEndpoint"/> and waits until the operating system has taken it.</summary>
    /// <returns>The datagram's size once sent; 0 if not started, refused or failed.</returns>
    /// <exception cref="InvalidOperationException">The server was started without a multicast endpoint.</exception>
    public virtual long Multicast(string text) => Send(MulticastTarget, text);

    /// <summary>Sends <paramref name="text"/> as one UTF-8 datagram to <see cref="MulticastEndpoint"/> and waits until the operating system has taken it.</summary>
    /// <returns>The datagram's size once sent; 0 if not started, refused or failed.</returns>
    /// <exception cref="InvalidOperationException">The server was started without a multicast endpoint.</exception>
    public virtual long Multicast(ReadOnlySpan<char> text) => Send(MulticastTarget, text);

    /// <summary>Sends a datagram to <see cref="MulticastEndpoint"/> without waiting (see <see cref="UdpPeer.SendAsync(EndPoint, ReadOnlySpan{byte})"/>).</summary>
    /// <returns>True if sent or queued; false if not started, refused or failed at once.</returns>
    /// <exception cref="InvalidOperationException">The server was started without a multicast endpoint.</exception>
    public virtual bool MulticastAsync(byte[] buffer) => SendAsync(MulticastTarget, buffer);

    /// <summary>Sends part of <paramref name="buffer"/> as one datagram to <see cref="MulticastEndpoint"/> without waiting.</summary>
    /// <returns>True if sent or queued; false if not started, refused or failed at once.</returns>
    /// <exception cref="InvalidOperationException">The server was started without a multicast endpoint.</exception>
    public virtual bool MulticastAsync(byte[] buffer, long offset, long size) => SendAsync(MulticastTarget, buffer, offset, size);

    /// <summary>Sends a datagram to <see cref="MulticastEndpoint"/> without waiting.</summary>
    /// <returns>True if sent or queued; false if not started, refused or failed at once.</returns>
    /// <exception cref="InvalidOperationException">The server was started without a multicast endpoint.</exception>
    public virtual bool MulticastAsync(ReadOnlySpan<byte> buffer) => SendAsync(MulticastTarget, buffer);

    /// <summary>Sends <paramref name="text"/> as one UTF-8 datagram to <see cref="MulticastEndpoint"/> without waiting.</summary>
    /// <returns>True if sent or queued; false if not started, refused or failed at once.</returns>
    /// <exception cref="InvalidOperationException">The server was started without a multicast endpoint.</exception>
    public virtual bool MulticastAsync(string text) => SendAsync(MulticastTarget, text);

    /// <summary>Sends <paramref name="text"/> as one UTF-8 datagram to <see cref="MulticastEndpoint"/> without waiting.</summary>
    /// <returns>True if sent or queued; false if not started, refused or failed at once.</returns>
    /// <exception cref="InvalidOperationException">The server was started without a multicast endpoint.</exception>
    public virtual bool MulticastAsync(ReadOnlySpan<char> text) => SendAsync(MulticastTarget, text);

    /// <summary>Sends a datagram to <see cref="MulticastEndpoint"/> with backpressure (see <see cref="UdpPeer.SendAsync(EndPoint, ReadOnlyMemory{byte}, CancellationToken)"/>).</summary>
    /// <returns>True once sent or queued; false if not started or the datagram failed at once.</returns>
    /// <exception cref="InvalidOperationException">The server was started without a multicast endpoint.</exception>
    public ValueTask<bool> MulticastAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default) =>
        SendAsync(MulticastTarget, buffer, cancellationToken);

    private EndPoint MulticastTarget => MulticastEndpoint
        ?? throw new InvalidOperationException("The server has no multicast endpoint: start it with Start(multicastAddress, multicastPort).");

    // --- Hooks ---

    /// <summary>Called at the start of <see cref="Start()"/>.</summary>
    protected virtual void OnStarting()
    {
    }

    /// <summary>Called once the socket is bound; a good place for the first <c>ReceiveAsync()</c>.</summary>
    protected virtual void OnStarted()
    {
    }

    /// <summary>Called at the start of <see cref="Stop"/>, before the socket closes.</summary>
    protected virtual void OnStopping()
    {
    }

    /// <summary>Called once the server has stopped, after every other hook of its socket.</summary>
    protected virtual void OnStopped()
    {
    }
}
