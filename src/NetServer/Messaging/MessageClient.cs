using System.Collections.Generic;
using NetServer.Messaging;

namespace NetServer;

/// <summary>
/// A client of length-prefixed messages (see <see cref="MessageProtocol"/>) over TCP, TLS or Unix
/// domain sockets, chosen by the constructor. Handle messages in <see cref="OnMessage"/> (override
/// it), or await them with <see cref="ReceiveAsync"/> / <see cref="ReceiveAllAsync"/>; send with the
/// <c>SendAsync</c> overloads (the awaitable ones wait for room in the send queue).
/// </summary>
/// <remarks>
/// Unless <see cref="OnMessage"/> is overridden (without calling the base), each message is copied
/// into a receive queue of at most <see cref="OptionReceiveQueueLimit"/> bytes. While the queue is
/// over its limit the client stops reading, so a server that sends faster than the application
/// takes messages is slowed down by TCP, and memory stays bounded.
/// </remarks>
public partial class MessageClient : MessageProtocol, IDisposable
{
    private readonly StreamClient _client;
    private readonly MessageInbox _inbox = new();
    private long _receiveQueueLimit = 4 * 1024 * 1024;

    /// <summary>A TCP client for <paramref name="address"/>:<paramref name="port"/>.</summary>
    public MessageClient(IPAddress address, int port)
        : this(new IPEndPoint(address, port))
    {
    }

    /// <summary>A TCP client for an IP address or host name given as text.</summary>
    public MessageClient(string address, int port)
        : this(EndPoints.Parse(address, port))
    {
    }

    /// <summary>A client for <paramref name="endpoint"/>: TCP for an IP or DNS endpoint, a Unix domain socket for a Unix endpoint.</summary>
    public MessageClient(EndPoint endpoint)
        : this(_ => ProtocolHosts.CreateClient(endpoint))
    {
    }

    private protected MessageClient(Func<MessageClient, StreamClient> client)
    {
        _client = client(this);
        _client.Protocol = this; // attached once the client is held: an OnAttached override may use Transport
    }

    /// <summary>The transport client underneath (a <c>TcpClient</c>, <c>SslClient</c> or <c>UdsClient</c>): its options apply to the next connect.</summary>
    public StreamClient Transport => _client;

    /// <summary>The identifier of the current connection.</summary>
    public Guid Id => _client.Id;

    /// <summary>True while connected.</summary>
    public bool IsConnected => _client.IsConnected;

    /// <summary>True while a connect is in progress.</summary>
    public bool IsConnecting => _client.IsConnecting;

    /// <summary>The server's endpoint.</summary>
    public EndPoint Endpoint => _client.Endpoint;

    /// <summary>Why the last connection ended.</summary>
    public DisconnectReason DisconnectReason => _client.DisconnectReason;

    /// <summary>
    /// The most bytes of received messages the receive queue holds before the client stops reading
    /// (default 4 MiB; a larger message still fits alone). Reading resumes once half of it is taken.
    /// </summary>
    public long OptionReceiveQueueLimit
    {
        get => Interlocked.Read(ref _receiveQueueLimit);
        set
        {
            if (value <= 0)
                ThrowHelper.ThrowArgumentOutOfRange(nameof(OptionReceiveQueueLimit), "The receive queue limit must be positive.");
            Interlocked.Exchange(ref _receiveQueueLimit, value);
        }
    }

    /// <summary>Messages waiting in the receive queue.</summary>
    public int ReceiveQueueCount => _inbox.Count;

    /// <summary>Connects (and over TLS, handshakes), blocking; false on failure.</summary>
    public virtual bool Connect() => _client.Connect();

    /// <summary>Connects (and over TLS, handshakes); completes once the client is ready to send and receive messages.</summary>
    /// <returns>True once connected; false if already connected or connecting.</returns>
    /// <exception cref="SocketException">The connect failed.</exception>
    /// <exception cref="System.Security.Authentication.AuthenticationException">The TLS handshake failed: the handshake's own exception is rethrown (usually this one; a <see cref="TimeoutException"/> when it took too long).</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> fired before the connection was up.</exception>
    public virtual Task<bool> ConnectAsync(CancellationToken cancellationToken = default) => _client.ConnectAsync(cancellationToken);

    /// <summary>Disconnects gracefully (queued messages are still sent) and returns after OnDisconnected; false if not connected.</summary>
    public virtual bool Disconnect() => _client.Disconnect();

    /// <summary>Disconnects gracefully; completes after OnDisconnected.</summary>
    public virtual Task<bool> DisconnectAsync(CancellationToken cancellationToken = default) => _client.DisconnectAsync(cancellationToken);

    /// <summary>Disconnects, then connects again (blocking).</summary>
    public virtual bool Reconnect() => _client.Reconnect();

    /// <summary>
    /// The next received message, in order: at once if one is queued, otherwise when one arrives.
    /// Dispose it when done (its bytes are pooled). One reader at a time.
    /// </summary>
    /// <exception cref="System.IO.IOException">Not connected, or the connection closed, and no message is left.</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> fired while waiting.</exception>
    public ValueTask<ReceivedMessage> ReceiveAsync(CancellationToken cancellationToken = default) =>
        _inbox.ReceiveAsync(_client, OptionReceiveQueueLimit, cancellationToken);

    /// <summary>
    /// Every received message, in order, until the connection closes (the sequence then ends) or
    /// <paramref name="cancellationToken"/> fires. Dispose each message when done.
    /// </summary>
    public IAsyncEnumerable<ReceivedMessage> ReceiveAllAsync(CancellationToken cancellationToken = default) =>
        _inbox.ReceiveAllAsync(_client, OptionReceiveQueueLimit, cancellationToken);

    /// <summary>Disconnects and releases the client.</summary>
    public void Dispose()
    {
        Dispose(true);
        GC.SuppressFinalize(this);
    }

    /// <summary>Queues a copy of the message for <see cref="ReceiveAsync"/>; override to handle messages in place instead.</summary>
    protected override void OnMessage(ReadOnlySpan<byte> message) => _inbox.Add(message, _client, OptionReceiveQueueLimit);

    /// <summary>Called when connected (and over TLS, handshaked), before any message.</summary>
    protected internal override void OnConnected()
    {
    }

    /// <summary>Called once when a connection ended, with the reason (a failed connect is reported by <see cref="ConnectAsync"/>, which throws, instead).</summary>
    protected internal override void OnDisconnected(DisconnectReason reason)
    {
    }

    internal override void InvokeConnected()
    {
        _inbox.Open();
        base.InvokeConnected();
    }

    internal override void InvokeDisconnected(DisconnectReason reason)
    {
        try
        {
            base.InvokeDisconnected(reason);
        }
        finally
        {
            _inbox.End(reason); // a waiting reader wakes even if OnDisconnected threw
        }
    }

    /// <summary>Releases the transport client and any queued messages.</summary>
    protected virtual void Dispose(bool disposing)
    {
        if (!disposing)
            return;
        _client.Dispose();
        _inbox.End(DisconnectReason.Disposed);
        _inbox.Clear();
    }
}
