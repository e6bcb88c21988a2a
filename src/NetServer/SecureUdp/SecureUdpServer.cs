using NetServer.SecureUdp;

namespace NetServer;

/// <summary>
/// A UDP server whose datagrams are sealed and opened with secure sessions (AES-GCM or
/// ChaCha20-Poly1305, keys per direction, replay window, rekeying: docs/secure-udp.md). Add a
/// session per client to <see cref="Sessions"/> (keys given by the application); datagrams are
/// then opened in place before <c>OnReceived</c>, which sees only authentic plaintext. Answer a
/// session with <see cref="SendAsync(SecureUdpSession, ReadOnlySpan{byte})"/> (sealed with that
/// session's keys, sent to its endpoint); a send to an endpoint is sealed with the session bound to it. A datagram that does
/// not open is counted (<see cref="DatagramsDropped"/>, the table's and the sessions' counters)
/// and dropped: no hook, no exception. Everything else is <see cref="UdpServer"/>'s engine.
/// </summary>
/// <remarks>
/// A send to an endpoint no session has been heard from is refused (OnError:
/// <see cref="SocketError.NotConnected"/>); so is <c>Multicast</c> (a group has no session). The
/// blocking <c>Receive</c> is not available: use <c>ReceiveAsync()</c> or <c>OptionAutoReceive</c>.
/// Counters and <c>OnSent</c> count bytes on the wire (sealed).
/// </remarks>
public class SecureUdpServer : UdpServer
{
    /// <summary>A secure server on <paramref name="address"/>:<paramref name="port"/> (port 0 picks a free port).</summary>
    /// <exception cref="PlatformNotSupportedException">The netstandard2.0 build (no AES-GCM).</exception>
    public SecureUdpServer(IPAddress address, int port)
        : this(new IPEndPoint(address, port))
    {
    }

    /// <summary>A secure server on <paramref name="endpoint"/>.</summary>
    /// <exception cref="PlatformNotSupportedException">The netstandard2.0 build (no AES-GCM).</exception>
    public SecureUdpServer(IPEndPoint endpoint)
        : base(endpoint)
    {
        Sessions = new SecureUdpSessionTable();
        UseSecurity(DatagramSecurity.ForServer(Sessions));
    }

    /// <summary>The sessions datagrams are opened for, one per client, found by receiver index. Add and remove them at any time.</summary>
    public SecureUdpSessionTable Sessions { get; }

    /// <summary>Datagrams received and not delivered: refused (truncated, unknown, forged, replayed, ...) or authentic but not data.</summary>
    public long DatagramsDropped => Security!.DatagramsDropped;

    /// <summary>
    /// Called once per authentic data datagram, with the session it authenticated for; the default
    /// calls <c>OnReceived(endpoint, buffer, offset, size)</c>. The payload is decrypted in place in
    /// a pooled buffer, valid only during the call.
    /// </summary>
    /// <param name="session">The client's session (whose <see cref="SecureUdpSession.RemoteEndpoint"/> is now <paramref name="endpoint"/>).</param>
    /// <param name="endpoint">The sender.</param>
    /// <param name="buffer">The pooled buffer holding the plaintext.</param>
    /// <param name="offset">Where the plaintext starts.</param>
    /// <param name="size">The plaintext's size.</param>
    protected virtual void OnReceived(SecureUdpSession session, EndPoint endpoint, byte[] buffer, long offset, long size) =>
        OnReceived(endpoint, buffer, offset, size);

    /// <summary>Authenticated datagrams from an endpoint another live session holds: delivered, but that endpoint stays bound to its first session.</summary>
    public long EndpointConflicts => Security!.EndpointConflicts;

    /// <summary>
    /// Sends a datagram to <paramref name="session"/>, sealed with its keys, at its
    /// <see cref="SecureUdpSession.RemoteEndpoint"/>, without waiting: the reply path (an answer
    /// sealed by session, never by whichever session an endpoint is bound to). A session with no
    /// endpoint yet, or not in <see cref="Sessions"/>, is refused (OnError: <see cref="SocketError.NotConnected"/>).
    /// </summary>
    /// <returns>True if the datagram was sent or queued; false if not started, refused or failed at once.</returns>
    public bool SendAsync(SecureUdpSession session, ReadOnlySpan<byte> buffer) => SendQueued(session, buffer);

    /// <summary>Sends <paramref name="buffer"/> to <paramref name="session"/> without waiting (see <see cref="SendAsync(SecureUdpSession, ReadOnlySpan{byte})"/>).</summary>
    /// <returns>True if the datagram was sent or queued; false if not started, refused or failed at once.</returns>
    public bool SendAsync(SecureUdpSession session, byte[] buffer)
    {
        if (buffer is null)
            ThrowHelper.ThrowArgumentNull(nameof(buffer));
        return SendQueued(session, buffer);
    }

    /// <summary>Sends <paramref name="size"/> bytes of <paramref name="buffer"/> from <paramref name="offset"/> to <paramref name="session"/> without waiting (see <see cref="SendAsync(SecureUdpSession, ReadOnlySpan{byte})"/>).</summary>
    /// <returns>True if the datagram was sent or queued; false if not started, refused or failed at once.</returns>
    public bool SendAsync(SecureUdpSession session, byte[] buffer, long offset, long size)
    {
        ThrowHelper.ValidateRange(buffer, offset, size, out var start, out var count);
        return SendQueued(session, new ReadOnlySpan<byte>(buffer, start, count));
    }

    /// <summary>Sends a datagram to <paramref name="session"/> with backpressure (as <c>SendAsync(EndPoint, ReadOnlyMemory, CancellationToken)</c>).</summary>
    /// <returns>True once sent or queued; false if not started, refused or failed at once.</returns>
    public ValueTask<bool> SendAsync(SecureUdpSession session, ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default) =>
        SendAwaitable(session, buffer, cancellationToken);

    /// <summary>Sends a datagram to <paramref name="session"/> and waits until the operating system has taken it (see <see cref="SendAsync(SecureUdpSession, ReadOnlySpan{byte})"/>).</summary>
    /// <returns>The payload's size once sent; 0 if not started, refused or failed.</returns>
    public long Send(SecureUdpSession session, ReadOnlySpan<byte> buffer) => SendBlocking(session, buffer);

    private protected override void OnSecureReceived(SecureUdpSession session, EndPoint endpoint, byte[] buffer, int offset, int size) =>
        OnReceived(session, endpoint, buffer, offset, size);
}
