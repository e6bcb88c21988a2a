using NetServer.SecureUdp;

namespace NetServer;

/// <summary>
/// A UDP client whose datagrams are sealed and opened with one secure session (keys given by the
/// application: docs/secure-udp.md). Everything it sends is sealed with <see cref="Session"/>;
/// everything it receives is opened in place before <c>OnReceived</c>, which sees only authentic
/// plaintext. A datagram that does not open is counted (<see cref="DatagramsDropped"/>, the
/// session's counters) and dropped: no hook, no exception. Everything else is <see cref="UdpClient"/>'s engine.
/// </summary>
/// <remarks>
/// The blocking <c>Receive</c> is not available: use <c>ReceiveAsync()</c> or
/// <c>OptionAutoReceive</c>. Counters and <c>OnSent</c> count bytes on the wire (sealed). The
/// client does not dispose the session.
/// </remarks>
public class SecureUdpClient : UdpClient
{
    /// <summary>A secure client of the server at <paramref name="address"/>:<paramref name="port"/>.</summary>
    /// <exception cref="PlatformNotSupportedException">The netstandard2.0 build (no AES-GCM).</exception>
    public SecureUdpClient(IPAddress address, int port, SecureUdpSession session)
        : this(new IPEndPoint(address, port), session)
    {
    }

    /// <summary>A secure client of the server at <paramref name="endpoint"/>, sealing with <paramref name="session"/>.</summary>
    /// <exception cref="PlatformNotSupportedException">The netstandard2.0 build (no AES-GCM).</exception>
    public SecureUdpClient(IPEndPoint endpoint, SecureUdpSession session)
        : base(endpoint)
    {
        Aead.EnsureAvailable();
        if (session is null)
            ThrowHelper.ThrowArgumentNull(nameof(session));
        Session = session;
        UseSecurity(DatagramSecurity.ForClient(session));
    }

    /// <summary>The session everything is sealed and opened with.</summary>
    public SecureUdpSession Session { get; }

    /// <summary>Datagrams received and not delivered: refused (truncated, unknown, forged, replayed, ...) or authentic but not data.</summary>
    public long DatagramsDropped => Security!.DatagramsDropped;
}
