using NetServer.Udp;

namespace NetServer;

/// <summary>
/// A UDP client. <c>Connect()</c> opens a socket for talking to the server at
/// <see cref="UdpPeer.Endpoint"/>: the socket is connected to it, so only the server's datagrams
/// are delivered and a server that does not listen is reported through OnError
/// (<see cref="SocketError.ConnectionRefused"/>) while the client goes on. A multicast client
/// (<see cref="SetupMulticast"/>) instead listens on <see cref="UdpPeer.Endpoint"/> and joins groups.
/// </summary>
public class UdpClient : UdpPeer
{
    private const int StateDisconnected = 0;
    private const int StateConnecting = 1;
    private const int StateConnected = 2;
    private const int StateDisconnecting = 3;

    private int _state;
    private EndPoint? _target;

    /// <summary>A client of the server at <paramref name="address"/>:<paramref name="port"/>.</summary>
    public UdpClient(IPAddress address, int port)
        : this(new IPEndPoint(address, port))
    {
    }

    /// <summary>A client of the server at an IP address or host name given as text.</summary>
    public UdpClient(string address, int port)
        : base(EndPoints.Parse(address, port))
    {
    }

    /// <summary>A client of the server at a host name, resolved when it connects.</summary>
    public UdpClient(DnsEndPoint endpoint)
        : base(endpoint)
    {
    }

    /// <summary>A client of the server at <paramref name="endpoint"/>.</summary>
    public UdpClient(IPEndPoint endpoint)
        : base(endpoint)
    {
    }

    /// <summary>True between a successful <see cref="Connect"/> and <see cref="Disconnect"/>.</summary>
    public bool IsConnected => Volatile.Read(ref _state) == StateConnected;

    /// <summary>
    /// Listen on <see cref="UdpPeer.Endpoint"/> (bind to it) to receive multicast, instead of
    /// talking to a server there. Set by <see cref="SetupMulticast"/>.
    /// </summary>
    public bool OptionMulticast { get; set; }

    /// <summary>
    /// Leave the socket unconnected: datagrams from any sender are delivered, and sends may go to any
    /// endpoint; unreachable ports are then not reported (the system reports them only on a connected
    /// socket). Default false.
    /// </summary>
    public bool OptionReceiveFromAnySender { get; set; }

    /// <summary>Prepares (or undoes) listening for multicast: <see cref="OptionMulticast"/> and <see cref="UdpPeer.OptionReuseAddress"/>.</summary>
    public virtual void SetupMulticast(bool enable)
    {
        OptionReuseAddress = enable;
        OptionMulticast = enable;
    }

    // --- Connect / disconnect ---

    /// <summary>
    /// Opens the socket: OnConnecting, bind (and connect to the server, see the class remarks),
    /// OnConnected; receiving begins with <c>ReceiveAsync()</c> (or at once with
    /// <see cref="UdpPeer.OptionAutoReceive"/>). A socket error is reported through OnError.
    /// </summary>
    /// <returns>True if connected; false if already connected (or connecting, or still disconnecting) or on a socket error.</returns>
    public virtual bool Connect()
    {
        if (Interlocked.CompareExchange(ref _state, StateConnecting, StateDisconnected) != StateDisconnected)
            return false;

        DatagramChannel channel;
        Socket? socket = null;
        try
        {
            RunHook(static self => ((UdpClient)self).OnConnecting(), this);
            var target = EndPoints.Resolve(Endpoint);
            SocketEndpoint = target;
            socket = CreateSocket();
            ConfigureSocket(socket);
            if (OptionMulticast)
            {
                socket.Bind(target);
                target = socket.LocalEndPoint ?? target; // the real port when 0 was asked for
                Endpoint = target;
            }
            else
            {
                socket.Bind(new IPEndPoint(socket.AddressFamily == AddressFamily.InterNetworkV6 ? IPAddress.IPv6Any : IPAddress.Any, 0));
                if (!OptionReceiveFromAnySender)
                    socket.Connect(target);
            }

            _target = target;
            channel = Open(socket);
        }
        catch (SocketException e)
        {
            socket?.Dispose();
            Volatile.Write(ref _state, StateDisconnected);
            ReportConnectError(e.SocketErrorCode);
            return false;
        }
        catch
        {
            socket?.Dispose();
            Volatile.Write(ref _state, StateDisconnected);
            throw;
        }

        Volatile.Write(ref _state, StateConnected);
        try
        {
            RunHook(static self => ((UdpClient)self).OnConnected(), this);
        }
        finally
        {
            channel.FinishOpening(); // a stop of the socket's loop during the start closes it only now
        }

        if (OptionAutoReceive)
            channel.RequestReceive();
        return true;
    }

    /// <summary>
    /// Closes the socket: OnDisconnecting, then (queued datagrams are dropped) OnDisconnected, which
    /// comes after every other hook of the socket. Returns after OnDisconnected; from inside a
    /// NetServer hook it does not wait, and OnDisconnected follows once the running hooks have returned.
    /// </summary>
    /// <returns>True if disconnected; false if not connected.</returns>
    public virtual bool Disconnect()
    {
        if (BeginDisconnect() is not { } channel)
            return false;
        channel.WaitForFinish(BlockingWaitTimeout);
        return true;
    }

    /// <summary>Disconnects like <see cref="Disconnect"/> without blocking; completes after OnDisconnected.</summary>
    /// <returns>True if disconnected; false if not connected.</returns>
    public async Task<bool> DisconnectAsync()
    {
        if (BeginDisconnect() is not { } channel)
            return false;
        await channel.WhenFinished().ConfigureAwait(false);
        return true;
    }

    /// <summary>Disconnects, then connects again. From inside a hook the first part cannot finish in time, and this returns false.</summary>
    /// <returns>True if connected again.</returns>
    public virtual bool Reconnect() => Disconnect() && Connect();

    private DatagramChannel? BeginDisconnect()
    {
        if (Interlocked.CompareExchange(ref _state, StateDisconnecting, StateConnected) != StateConnected)
            return null;
        var channel = Channel!;
        RunHook(static self => ((UdpClient)self).OnDisconnecting(), this);
        channel.Close();
        return channel;
    }

    internal override void OnChannelFinished(DatagramChannel channel)
    {
        // Disconnected before OnDisconnected runs, so the hook may connect again.
        Volatile.Write(ref _state, StateDisconnected);
        RunHook(static self => ((UdpClient)self).OnDisconnected(), this);
    }

    private void ReportConnectError(SocketError error) =>
        RunHook(static (self, error) => self.InvokeError(error), this, error);

    private protected override void CloseForDispose() => Disconnect();

    private protected override Task CloseForDisposeAsync() => DisconnectAsync();

    // --- Multicast groups ---

    /// <summary>Joins the multicast group <paramref name="address"/> (on <see cref="UdpPeer.OptionMulticastInterface"/>), then raises OnJoinedMulticastGroup.</summary>
    /// <exception cref="InvalidOperationException">The client is not connected.</exception>
    /// <exception cref="SocketException">The system refused (for example, not a multicast address, or no route for it).</exception>
    public virtual void JoinMulticastGroup(IPAddress address)
    {
        SetMembership(address, SocketOptionName.AddMembership);
        RunHook(static (self, group) => ((UdpClient)self).OnJoinedMulticastGroup(group), this, address);
    }

    /// <summary>Joins the multicast group given as text (see <see cref="JoinMulticastGroup(IPAddress)"/>).</summary>
    public virtual void JoinMulticastGroup(string address) => JoinMulticastGroup(ParseGroup(address));

    /// <summary>Leaves the multicast group <paramref name="address"/>, then raises OnLeftMulticastGroup.</summary>
    /// <exception cref="InvalidOperationException">The client is not connected.</exception>
    /// <exception cref="SocketException">The system refused (for example, the group was not joined).</exception>
    public virtual void LeaveMulticastGroup(IPAddress address)
    {
        SetMembership(address, SocketOptionName.DropMembership);
        RunHook(static (self, group) => ((UdpClient)self).OnLeftMulticastGroup(group), this, address);
    }

    /// <summary>Leaves the multicast group given as text (see <see cref="LeaveMulticastGroup(IPAddress)"/>).</summary>
    public virtual void LeaveMulticastGroup(string address) => LeaveMulticastGroup(ParseGroup(address));

    private void SetMembership(IPAddress address, SocketOptionName option)
    {
        if (address is null)
            ThrowHelper.ThrowArgumentNull(nameof(address));
        if (Channel is not { IsOpen: true } channel)
            throw new InvalidOperationException("Connect the client first: multicast groups are joined on its socket.");
        if (address.AddressFamily == AddressFamily.InterNetwork)
            channel.Socket.SetSocketOption(SocketOptionLevel.IP, option, new MulticastOption(address, OptionMulticastInterface));
        else
            channel.Socket.SetSocketOption(SocketOptionLevel.IPv6, option, new IPv6MulticastOption(address, OptionMulticastInterface));
    }

    private static IPAddress ParseGroup(string address)
    {
        if (address is null)
            ThrowHelper.ThrowArgumentNull(nameof(address));
        return IPAddress.TryParse(address, out var parsed)
            ? parsed
            : throw new ArgumentException($"'{address}' is not an IP address.", nameof(address));
    }

    // --- Sends to the server ---

    /// <summary>Sends a datagram to the server and waits until the operating system has taken it.</summary>
    /// <returns>The datagram's size once sent; 0 if not connected, refused or failed.</returns>
    public virtual long Send(byte[] buffer) => Send(Target, buffer);

    /// <summary>Sends part of <paramref name="buffer"/> as one datagram to the server and waits until the operating system has taken it.</summary>
    /// <returns>The datagram's size once sent; 0 if not connected, refused or failed.</returns>
    public virtual long Send(byte[] buffer, long offset, long size) => Send(Target, buffer, offset, size);

    /// <summary>Sends a datagram to the server and waits until the operating system has taken it (see <see cref="UdpPeer.Send(EndPoint, ReadOnlySpan{byte})"/>).</summary>
    /// <returns>The datagram's size once sent; 0 if not connected, refused or failed.</returns>
    public virtual long Send(ReadOnlySpan<byte> buffer) => Send(Target, buffer);

    /// <summary>Sends <paramref name="text"/> as one UTF-8 datagram to the server and waits until the operating system has taken it.</summary>
    /// <returns>The datagram's size once sent; 0 if not connected, refused or failed.</returns>
    public virtual long Send(string text) => Send(Target, text);

    /// <summary>Sends <paramref name="text"/> as one UTF-8 datagram to the server and waits until the operating system has taken it.</summary>
    /// <returns>The datagram's size once sent; 0 if not connected, refused or failed.</returns>
    public virtual long Send(ReadOnlySpan<char> text) => Send(Target, text);

    /// <summary>Sends a datagram to the server without waiting (see <see cref="UdpPeer.SendAsync(EndPoint, ReadOnlySpan{byte})"/>).</summary>
    /// <returns>True if sent or queued; false if not connected, refused or failed at once.</returns>
    public virtual bool SendAsync(byte[] buffer) => SendAsync(Target, buffer);

    /// <summary>Sends part of <paramref name="buffer"/> as one datagram to the server without waiting.</summary>
    /// <returns>True if sent or queued; false if not connected, refused or failed at once.</returns>
    public virtual bool SendAsync(byte[] buffer, long offset, long size) => SendAsync(Target, buffer, offset, size);

    /// <summary>Sends a datagram to the server without waiting.</summary>
    /// <returns>True if sent or queued; false if not connected, refused or failed at once.</returns>
    public virtual bool SendAsync(ReadOnlySpan<byte> buffer) => SendAsync(Target, buffer);

    /// <summary>Sends <paramref name="text"/> as one UTF-8 datagram to the server without waiting.</summary>
    /// <returns>True if sent or queued; false if not connected, refused or failed at once.</returns>
    public virtual bool SendAsync(string text) => SendAsync(Target, text);

    /// <summary>Sends <paramref name="text"/> as one UTF-8 datagram to the server without waiting.</summary>
    /// <returns>True if sent or queued; false if not connected, refused or failed at once.</returns>
    public virtual bool SendAsync(ReadOnlySpan<char> text) => SendAsync(Target, text);

    /// <summary>Sends a datagram to the server with backpressure (see <see cref="UdpPeer.SendAsync(EndPoint, ReadOnlyMemory{byte}, CancellationToken)"/>).</summary>
    /// <returns>True once sent or queued; false if not connected or the datagram failed at once.</returns>
    public ValueTask<bool> SendAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default) =>
        SendAsync(Target, buffer, cancellationToken);

    /// <summary>The server's resolved endpoint once connected (before that, the configured one: sends then find no socket).</summary>
    private EndPoint Target => Volatile.Read(ref _target) ?? Endpoint;

    // --- Hooks ---

    /// <summary>Called at the start of <see cref="Connect"/>.</summary>
    protected virtual void OnConnecting()
    {
    }

    /// <summary>Called once the socket is open; a good place to join groups and for the first <c>ReceiveAsync()</c>.</summary>
    protected virtual void OnConnected()
    {
    }

    /// <summary>Called at the start of <see cref="Disconnect"/>, before the socket closes.</summary>
    protected virtual void OnDisconnecting()
    {
    }

    /// <summary>Called once the socket is closed, after every other hook of it; <see cref="Connect"/> may be called from here.</summary>
    protected virtual void OnDisconnected()
    {
    }

    /// <summary>Called after <see cref="JoinMulticastGroup(IPAddress)"/> joined a group.</summary>
    protected virtual void OnJoinedMulticastGroup(IPAddress address)
    {
    }

    /// <summary>Called after <see cref="LeaveMulticastGroup(IPAddress)"/> left a group.</summary>
    protected virtual void OnLeftMulticastGroup(IPAddress address)
    {
    }
}
