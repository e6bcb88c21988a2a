using System.Buffers;
using System.Buffers.Binary;
using System.Collections.Generic;
using NetServer.Messaging;

namespace NetServer;

/// <summary>
/// A server of length-prefixed messages (see <see cref="MessageProtocol"/>) over TCP, TLS or Unix
/// domain sockets: one class for all three, chosen by the constructor. Each connection gets a
/// <see cref="MessageSession"/> from <see cref="CreateSession"/>; override it to return your own
/// session type and override the session's <c>OnMessage</c>.
/// </summary>
/// <example>
/// <code>
/// class EchoSession(MessageServer server) : MessageSession(server)
/// {
///     protected override void OnMessage(ReadOnlySpan&lt;byte&gt; message) =&gt; SendAsync(message);
/// }
/// class EchoServer(IPAddress address, int port) : MessageServer(address, port)
/// {
///     protected override MessageSession CreateSession() =&gt; new EchoSession(this);
/// }
/// </code>
/// </example>
public partial class MessageServer : IProtocolHostOwner, IDisposable
{
    private readonly IProtocolHost _host;

    /// <summary>A TCP server on <paramref name="address"/>:<paramref name="port"/> (port 0 picks a free port).</summary>
    public MessageServer(IPAddress address, int port)
        : this(new IPEndPoint(address, port))
    {
    }

    /// <summary>A TCP server on an IP address or host name given as text.</summary>
    public MessageServer(string address, int port)
        : this(EndPoints.Parse(address, port))
    {
    }

    /// <summary>
    /// A server on <paramref name="endpoint"/>: TCP for an <see cref="IPEndPoint"/> or
    /// <see cref="DnsEndPoint"/>, a Unix domain socket for a Unix endpoint (<c>UnixDomainSocketEndPoint</c>).
    /// </summary>
    public MessageServer(EndPoint endpoint) => _host = ProtocolHosts.CreateServer(endpoint, this);

    private protected MessageServer(Func<IProtocolHostOwner, IProtocolHost> host) => _host = host(this);

    /// <summary>The endpoint the server listens on; after <see cref="Start"/> the bound one (port 0 becomes the real port).</summary>
    public EndPoint Endpoint => _host.Endpoint;

    /// <summary>The bound port of a TCP or TLS server (0 for a Unix domain socket).</summary>
    public int Port => Endpoint is IPEndPoint ip ? ip.Port : 0;

    /// <summary>True between a successful <see cref="Start"/> and <see cref="Stop"/>.</summary>
    public bool IsStarted => _host.IsStarted;

    /// <summary>Sessions connected now.</summary>
    public long ConnectedSessions => _host.ConnectedSessions;

    /// <summary>Connections refused by <see cref="OptionMaxSessions"/>.</summary>
    public long RejectedSessions => _host.RejectedSessions;

    /// <summary>Bytes sent by all sessions (length prefixes included).</summary>
    public long BytesSent => _host.BytesSent;

    /// <summary>Bytes received by all sessions (length prefixes included).</summary>
    public long BytesReceived => _host.BytesReceived;

    /// <summary>The largest message accepted from a peer (default 16 MiB): the <see cref="MessageProtocol.MaxMessageSize"/> of each new session.</summary>
    public int OptionMaxMessageSize
    {
        get;
        set
        {
            if (value < 0)
                ThrowHelper.ThrowArgumentOutOfRange(nameof(OptionMaxMessageSize), "The maximum message size cannot be negative.");
            field = value;
        }
    } = MessageProtocol.DefaultMaxMessageSize;

    /// <summary>The most sessions at once (0: no limit); a connection over it is closed at once and counted in <see cref="RejectedSessions"/>.</summary>
    public int OptionMaxSessions
    {
        get => _host.OptionMaxSessions;
        set => _host.OptionMaxSessions = value;
    }

    /// <summary>The listen backlog (default 4096).</summary>
    public int OptionAcceptorBacklog
    {
        get => _host.OptionAcceptorBacklog;
        set => _host.OptionAcceptorBacklog = value;
    }

    /// <summary>
    /// Receives the operational events of this server and its sessions (see <see cref="Diagnostics.NetServerEventListener"/>);
    /// null, the default, for none. Set it before <see cref="Start"/>.
    /// </summary>
    public Diagnostics.NetServerEventListener? EventListener
    {
        get => _host.EventListener;
        set => _host.EventListener = value;
    }

    /// <summary>Disable Nagle's delay (TCP_NODELAY) on accepted TCP and TLS connections (no effect on Unix sockets).</summary>
    public bool OptionNoDelay
    {
        get => _host.OptionNoDelay;
        set => _host.OptionNoDelay = value;
    }

    /// <summary>
    /// Whether connections start with a PROXY protocol header from a trusted proxy in front (HAProxy
    /// <c>send-proxy</c>/<c>send-proxy-v2</c>): the transport server's option, with the same meaning
    /// and outcomes (see <see cref="StreamServer{TSession}.OptionProxyProtocol"/>); the session's
    /// <see cref="MessageSession.RemoteEndPoint"/> is then the real client. Set it before <see cref="Start"/>.
    /// </summary>
    public ProxyProtocolMode OptionProxyProtocol
    {
        get => _host.OptionProxyProtocol;
        set => _host.OptionProxyProtocol = value;
    }

    /// <summary>The proxies whose PROXY headers are believed (see <see cref="StreamServer{TSession}.OptionProxyTrustedNetworks"/>).</summary>
    public IList<string> OptionProxyTrustedNetworks => _host.OptionProxyTrustedNetworks;

    /// <summary>How long a connection may take to deliver its PROXY header (see <see cref="StreamServer{TSession}.OptionProxyHeaderTimeout"/>).</summary>
    public TimeSpan OptionProxyHeaderTimeout
    {
        get => _host.OptionProxyHeaderTimeout;
        set => _host.OptionProxyHeaderTimeout = value;
    }

    /// <summary>Accept IPv4 connections on an IPv6 listener (a TCP or TLS server on an IPv6 address such as [::]; no effect otherwise). Set it before <see cref="Start"/>.</summary>
    public bool OptionDualMode
    {
        get => _host.OptionDualMode;
        set => _host.OptionDualMode = value;
    }

    /// <summary>The sessions connected now.</summary>
    public IEnumerable<MessageSession> Sessions
    {
        get
        {
            foreach (var session in _host.All)
            {
                if (session.Protocol is MessageSession message)
                    yield return message;
            }
        }
    }

    /// <summary>Starts listening; false if already started.</summary>
    public virtual bool Start() => _host.Start();

    /// <summary>Stops listening and disconnects every session; false if not started.</summary>
    public virtual bool Stop() => _host.Stop();

    /// <summary>Stops like <see cref="Stop"/> without blocking: completes after every session's OnDisconnected and OnStopped.</summary>
    /// <returns>True if stopped; false if not started.</returns>
    public Task<bool> StopAsync() => _host.StopAsync();

    /// <summary>Stops, then starts again.</summary>
    public virtual bool Restart() => _host.Restart();

    /// <summary>Disconnects every session; the server keeps listening.</summary>
    public virtual bool DisconnectAll() => _host.DisconnectAll();

    /// <summary>The session with <paramref name="id"/> (its <see cref="MessageSession.Id"/>), or null.</summary>
    public MessageSession? FindSession(Guid id) => _host.Find(id)?.Protocol as MessageSession;

    /// <summary>
    /// Sends <paramref name="message"/> to every connected session. The frame (prefix and payload) is
    /// built once and its bytes shared by all sessions. A session whose send queue cannot take it within
    /// its send limit is disconnected (<see cref="DisconnectReason.SendBufferFull"/>) rather than
    /// silently miss it; <see cref="MulticastAsync"/> waits for room instead.
    /// </summary>
    /// <returns>False if the server is not started.</returns>
    public virtual bool Multicast(ReadOnlySpan<byte> message)
    {
        MessageProtocol.FlushDelivering(); // answers sent before it from this OnMessage go first
        using var counted = Diagnostics.MulticastKind.Of(Diagnostics.MessageMetrics.Messages);
        if (message.Length <= 1024)
        {
            Span<byte> frame = stackalloc byte[MessageProtocol.HeaderSize + message.Length];
            return _host.Multicast(Frame(message, frame));
        }

        var rented = ArrayPool<byte>.Shared.Rent(MessageProtocol.HeaderSize + message.Length);
        try
        {
            return _host.Multicast(Frame(message, rented));
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(rented);
        }
    }

    /// <summary>
    /// Sends <paramref name="message"/> to every connected session with backpressure: where a
    /// session's send queue is full, waits for room instead of refusing (the frame is built once).
    /// </summary>
    /// <returns>False if the server is not started.</returns>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> fired while waiting for a session; the remaining sessions did not get the message.</exception>
    public async ValueTask<bool> MulticastAsync(ReadOnlyMemory<byte> message, CancellationToken cancellationToken = default)
    {
        MessageProtocol.FlushDelivering();
        var length = MessageProtocol.HeaderSize + message.Length;
        var frame = ArrayPool<byte>.Shared.Rent(length);
        try
        {
            Frame(message.Span, frame);
            ValueTask<bool> sending;
            using (Diagnostics.MulticastKind.Of(Diagnostics.MessageMetrics.Messages))
                sending = _host.MulticastAsync(new ReadOnlyMemory<byte>(frame, 0, length), cancellationToken);
            return await sending.ConfigureAwait(false);
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(frame);
        }
    }

    /// <summary>Sends <paramref name="message"/> to every connected session (see <see cref="Multicast(ReadOnlySpan{byte})"/>).</summary>
    public bool Multicast(byte[] message) => Multicast(new ReadOnlySpan<byte>(message ?? throw new ArgumentNullException(nameof(message))));

    /// <summary>Stops the server and releases the listener.</summary>
    public void Dispose()
    {
        Dispose(true);
        GC.SuppressFinalize(this);
    }

    /// <summary>Creates the session of a new connection; override to return your own type.</summary>
    protected virtual MessageSession CreateSession() => new(this);

    /// <summary>Called when the server started listening.</summary>
    protected virtual void OnStarted()
    {
    }

    /// <summary>Called when the server stopped (every session disconnected).</summary>
    protected virtual void OnStopped()
    {
    }

    /// <summary>Called on a server-level socket error (accepting, or a refused session).</summary>
    protected virtual void OnError(SocketError error)
    {
    }

    /// <summary>Releases the transport server.</summary>
    protected virtual void Dispose(bool disposing)
    {
        if (disposing)
            _host.Dispose();
    }

    private static ReadOnlySpan<byte> Frame(ReadOnlySpan<byte> message, Span<byte> destination)
    {
        BinaryPrimitives.WriteInt32LittleEndian(destination, message.Length);
        message.CopyTo(destination.Slice(MessageProtocol.HeaderSize));
        return destination.Slice(0, MessageProtocol.HeaderSize + message.Length);
    }

    StreamProtocol IProtocolHostOwner.CreateProtocol()
    {
        var session = CreateSession() ?? throw new InvalidOperationException("CreateSession returned null.");
        session.MaxMessageSize = OptionMaxMessageSize;
        return session;
    }

    void IProtocolHostOwner.HostStarted() => OnStarted();

    void IProtocolHostOwner.HostStopped() => OnStopped();

    void IProtocolHostOwner.HostError(SocketError error) => OnError(error);
}
