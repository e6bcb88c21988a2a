using System.Collections.Concurrent;
using System.Collections.Generic;

namespace NetServer;

/// <summary>
/// The PROXY protocol on the server side: which connections must start with a header, reading it
/// before anything else (before the session's first hook and before a TLS handshake), and closing
/// those that fail, with a reason.
/// </summary>
public abstract partial class StreamServer<TSession>
{
    /// <summary>Default for <see cref="OptionProxyHeaderTimeout"/>: 5 seconds.</summary>
    public static readonly TimeSpan DefaultProxyHeaderTimeout = TimeSpan.FromSeconds(5);

    private ProxyProtocolMode _proxyMode;
    private TimeSpan _proxyHeaderTimeout = DefaultProxyHeaderTimeout;
    private ProxyNetwork[] _proxyTrust = Array.Empty<ProxyNetwork>();
    private readonly List<string> _proxyTrustedNetworks = new();
    private readonly ConcurrentDictionary<Connection, byte> _proxyPending = new(); // headers being read: a stop closes them

    /// <summary>
    /// Whether connections start with a PROXY protocol header (v1 or v2) from a proxy in front of
    /// the server (HAProxy <c>send-proxy</c> / <c>send-proxy-v2</c>, AWS NLB, nginx): default
    /// <see cref="ProxyProtocolMode.Off"/>. When a header is expected it is read before anything
    /// else, before the session's OnConnecting and before a TLS handshake, so the session sees the
    /// real client in <see cref="StreamSession.RemoteEndPoint"/> and <see cref="StreamSession.Proxy"/>
    /// from its first hook. Only headers from <see cref="OptionProxyTrustedNetworks"/> (any peer of a
    /// Unix socket) are believed. A connection that fails (untrusted with
    /// <see cref="ProxyProtocolMode.Required"/>, a malformed header, the peer closing first) ends
    /// with <see cref="DisconnectReason.ProtocolError"/>, one whose header does not arrive within
    /// <see cref="OptionProxyHeaderTimeout"/> with <see cref="DisconnectReason.TimedOut"/>; both are
    /// reported to <see cref="EventListener"/> as a <c>ProtocolError</c> of protocol "PROXY", and
    /// <see cref="StreamConnection.DisconnectException"/> says what was wrong. Set it before <see cref="Start"/>.
    /// </summary>
    public ProxyProtocolMode OptionProxyProtocol
    {
        get => _proxyMode;
        set
        {
            if (value is < ProxyProtocolMode.Off or > ProxyProtocolMode.Optional)
                ThrowHelper.ThrowArgumentOutOfRange(nameof(OptionProxyProtocol), "Unknown mode.");
            _proxyMode = value;
        }
    }

    /// <summary>
    /// The proxies whose PROXY headers are believed: IP addresses (<c>10.0.0.5</c>, <c>::1</c>) and
    /// networks in CIDR notation (<c>10.0.0.0/8</c>, <c>fd00::/8</c>); an IPv4-mapped IPv6 peer
    /// matches the IPv4 entries. Read when the server starts: a malformed entry makes
    /// <see cref="Start"/> throw <see cref="FormatException"/>, and a TCP server with
    /// <see cref="OptionProxyProtocol"/> on and no entry throws <see cref="InvalidOperationException"/>
    /// (it would trust nobody). Unix socket servers trust every peer (the socket file's permissions
    /// say who may connect) and need no entry.
    /// </summary>
    public IList<string> OptionProxyTrustedNetworks => _proxyTrustedNetworks;

    /// <summary>
    /// How long a connection may take to deliver its whole PROXY header (default
    /// <see cref="DefaultProxyHeaderTimeout"/>) before it is closed with
    /// <see cref="DisconnectReason.TimedOut"/>, so a silent peer cannot hold a connection.
    /// </summary>
    public TimeSpan OptionProxyHeaderTimeout
    {
        get => _proxyHeaderTimeout;
        set
        {
            if (value <= TimeSpan.Zero || value.TotalMilliseconds > int.MaxValue)
                ThrowHelper.ThrowArgumentOutOfRange(nameof(OptionProxyHeaderTimeout), "The timeout must be positive.");
            _proxyHeaderTimeout = value;
        }
    }

    /// <summary>Checks and parses the PROXY options when the server starts.</summary>
    private void PrepareProxyProtocol(EndPoint endpoint)
    {
        var trust = new ProxyNetwork[_proxyTrustedNetworks.Count];
        for (var i = 0; i < trust.Length; i++)
            trust[i] = ProxyNetwork.Parse(_proxyTrustedNetworks[i] ?? string.Empty);
        if (_proxyMode != ProxyProtocolMode.Off && trust.Length == 0 && endpoint.AddressFamily != AddressFamily.Unix)
        {
            throw new InvalidOperationException(
                "OptionProxyProtocol is on but OptionProxyTrustedNetworks is empty: add the proxy's address or network.");
        }

        _proxyTrust = trust;
    }

    /// <summary>
    /// Whether a header is to be read from this connection; <paramref name="refusal"/> is set when
    /// the connection must be refused instead (untrusted, and a header is required).
    /// </summary>
    private bool ExpectsProxyHeader(Connection connection, Socket socket, out string? refusal)
    {
        refusal = null;
        if (_proxyMode == ProxyProtocolMode.Off)
            return false;
        if (socket.AddressFamily == AddressFamily.Unix)
            return true;

        var peer = connection.PeerEndPoint as IPEndPoint;
        if (peer is not null)
        {
            foreach (var network in _proxyTrust)
            {
                if (network.Contains(peer.Address))
                    return true;
            }
        }

        if (_proxyMode == ProxyProtocolMode.Required)
            refusal = $"PROXY protocol: {peer?.Address.ToString() ?? "an unknown address"} is not a trusted proxy (OptionProxyTrustedNetworks)";
        return false;
    }

    /// <summary>
    /// Reads the header of a connection set up by <c>StartSessionCore</c>, then raises its connect
    /// hooks. It owns one set-up (<c>_starting</c>) and the connection's hold, and gives both back.
    /// </summary>
    private async Task ConnectBehindProxyAsync(Connection connection, TSession session, Socket socket, int generation)
    {
        try
        {
            _proxyPending[connection] = 0;
            if (!_isAccepting || generation != Volatile.Read(ref _generation))
                connection.Abort(DisconnectReason.ServerStopped); // the stop swept before this was listed

            ProxyInfo? info;
            string? failure;
            var wait = new ProxyHeaderWait(this, connection, session);
            using (var timeout = new CancellationTokenSource(_proxyHeaderTimeout))
            using (timeout.Token.Register(s_proxyHeaderTimedOut, wait))
            {
                (info, failure) = await ProxyHeaderReader.ReadAsync(socket).ConfigureAwait(false);
                wait.Finish(); // from here the timer, if it fires, closes nothing: the header made it in time
            }

            _proxyPending.TryRemove(connection, out _);
            if (info is not null)
                connection.SetProxy(info);
            else if (connection.IsOpen)
                RefuseProxy(connection, session, failure!);
            Connect(connection, session, generation);
        }
        catch (Exception e)
        {
            // Nothing above runs application code outside a guarded hook; keep a surprise visible anyway.
            connection.Abort(DisconnectReason.HandlerException, e);
            ReportException(e);
        }
        finally
        {
            _proxyPending.TryRemove(connection, out _);
            connection.Release();
            if (Interlocked.Decrement(ref _starting) == 0)
                StartsDrained();
        }
    }

    private static readonly Action<object?> s_proxyHeaderTimedOut = static state =>
    {
        var wait = (ProxyHeaderWait)state!;
        if (!wait.TimeOut())
            return;
        var message = $"PROXY protocol: no whole header within {wait.Server._proxyHeaderTimeout.TotalSeconds:0.###} s";
        if (wait.Connection.Abort(DisconnectReason.TimedOut, new TimeoutException(message)))
            Diagnostics.ListenerEvents.ProtocolError(wait.Session, wait.Connection, "PROXY", message);
    };

    /// <summary>One connection's header read against its timer: whichever ends first decides.</summary>
    private sealed class ProxyHeaderWait(StreamServer<TSession> server, Connection connection, TSession session)
    {
        private int _state; // 0 reading, 1 read (in time), 2 timed out

        public StreamServer<TSession> Server => server;

        public Connection Connection => connection;

        public TSession Session => session;

        /// <summary>The read ended (with a header or a failure): a later timer closes nothing.</summary>
        public void Finish() => Interlocked.CompareExchange(ref _state, 1, 0);

        /// <summary>True when the timer fired while the header was still being read.</summary>
        public bool TimeOut() => Interlocked.CompareExchange(ref _state, 2, 0) == 0;
    }

    /// <summary>Closes a connection that brought no valid header (or may not bring one), before any hook.</summary>
    private static void RefuseProxy(Connection connection, TSession session, string reason)
    {
        if (connection.Abort(DisconnectReason.ProtocolError, new ProtocolViolationException(reason)))
            Diagnostics.ListenerEvents.ProtocolError(session, connection, "PROXY", reason);
    }

    /// <summary>A stop began: the connections still waiting for their header close now.</summary>
    private void AbortProxyPending()
    {
        foreach (var connection in _proxyPending.Keys)
            connection.Abort(DisconnectReason.ServerStopped);
    }
}
