using System.Collections.Generic;
using NetServer.Http;

namespace NetServer.WebSockets;

/// <summary>
/// The client side of the opening handshake (RFC 6455 4.1), for any HTTP client (<see cref="WsClient"/>
/// over TCP, <c>WssClient</c> over TLS): on every connect, sends the upgrade request
/// (the application's, completed with the fields it left out), checks the server's answer as the RFC
/// asks of a client, and hands the connection to the WebSocket protocol. Blocking and awaiting
/// connects wait here for the outcome.
/// </summary>
internal sealed class WsClientUpgrade(StreamClient client, HttpClientProtocol http, WebSocketProtocol ws, IWebSocket hooks, WsOptions options, Func<HttpRequest> request)
    : IHttpClientUpgrade
{
    private readonly HttpRequest _sent = new();
    private WaitPoint _wait;
    private int _state;                        // State: the current connect's handshake
    private TaskCompletionSource<bool>? _done; // the current connect's outcome, for awaiting connects
    private string? _key;
    private List<string>? _offeredProtocols;
    private bool _offeredDeflate;
    private string? _error;                    // why the last handshake failed

    private enum State
    {
        Idle,
        Awaiting,
        Upgraded,
        Failed,
    }

    /// <summary>The nonce of the current (or next) connect's Sec-WebSocket-Key.</summary>
    public byte[] Nonce { get; private set; } = WsHandshake.NewNonce();

    /// <summary>Whether the current connection was upgraded.</summary>
    public bool IsUpgraded => Volatile.Read(ref _state) == (int)State.Upgraded;

    /// <summary>A connect starts: HTTP speaks first again, with a new nonce.</summary>
    public void Prepare()
    {
        Nonce = WsHandshake.NewNonce();
        Volatile.Write(ref _error, null);
        Volatile.Write(ref _done, new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously));
        Volatile.Write(ref _state, (int)State.Idle);
        client.Protocol = http;
    }

    /// <summary>The connection is ready (connected, and handshaked over TLS): sends the upgrade request.</summary>
    public void SendRequest()
    {
        var application = request();
        application.Clear();
        hooks.OnWsConnecting(application);
        Complete(application);
        Volatile.Write(ref _state, (int)State.Awaiting);
        if (http.SendRequest(_sent, blocking: false) == 0)
            Finish(State.Failed);
    }

    /// <summary>The request that goes out: the application's, with every required field it left out.</summary>
    private void Complete(HttpRequest application)
    {
        var empty = application.IsEmpty;
        _sent.Clear().SetBegin(empty ? "GET" : application.Method, empty ? "/" : application.Url, "HTTP/1.1");
        if (!empty)
        {
            for (var i = 0; i < application.Headers; i++)
            {
                var (name, value) = application.Header(i);
                if (!string.Equals(name, "Content-Length", StringComparison.OrdinalIgnoreCase))
                    _sent.SetHeader(name, value);
            }
        }

        AddMissing("Upgrade", "websocket");
        AddMissing("Connection", "Upgrade");
        AddMissing("Sec-WebSocket-Key", Convert.ToBase64String(Nonce));
        AddMissing("Sec-WebSocket-Version", "13");
        if (options.SubProtocols.Count > 0)
            AddMissing("Sec-WebSocket-Protocol", string.Join(", ", options.SubProtocols));
        var offer = options.Deflate is { } deflate && WsDeflater.IsSupported && !_sent.TryGetHeader("Sec-WebSocket-Extensions", out _)
            ? WsDeflateNegotiation.BuildOffer(deflate)
            : string.Empty;
        _offeredDeflate = offer.Length > 0;
        if (_offeredDeflate)
            _sent.SetHeader("Sec-WebSocket-Extensions", offer);
        _sent.Store.EndBodylessHead();

        _sent.TryGetHeader("Sec-WebSocket-Key", out var key);
        _key = key.Trim();
        _offeredProtocols = WsHandshake.ReadList(_sent, "Sec-WebSocket-Protocol"u8);
    }

    private void AddMissing(string name, string value)
    {
        if (!_sent.TryGetHeader(name, out _))
            _sent.SetHeader(name, value);
    }

    /// <inheritdoc/>
    public bool ReceivedResponse(HttpResponse response)
    {
        if (Volatile.Read(ref _state) != (int)State.Awaiting)
            return false;
        if (!Check(response, out var error, out var subProtocol, out var deflate))
        {
            Fail(error);
            return true;
        }

        ws.Start(options, subProtocol, deflate);
        client.Protocol = ws; // the bytes after the 101's head are the server's first frames
        Finish(State.Upgraded);
        hooks.OnWsConnected(response);
        return true;
    }

    /// <inheritdoc/>
    public bool ReceivedResponseError(string error)
    {
        if (Volatile.Read(ref _state) != (int)State.Awaiting)
            return false;
        Fail($"The answer to the WebSocket upgrade is not valid HTTP: {error}");
        return true;
    }

    /// <inheritdoc/>
    public void Closed()
    {
        if (Volatile.Read(ref _state) is (int)State.Awaiting or (int)State.Idle)
            Finish(State.Failed);
    }

    /// <summary>Waits (blocking) for the current connect's handshake; true when upgraded.</summary>
    public bool WaitUpgraded(TimeSpan timeout)
    {
        _wait.WaitUntil(this, static self => Volatile.Read(ref self._state) is (int)State.Upgraded or (int)State.Failed, timeout);
        return IsUpgraded;
    }

    /// <summary>
    /// An awaited connect: <paramref name="connecting"/> (the transport's connect), then the handshake
    /// within <see cref="WsOptions.HandshakeTimeout"/>; failures throw (see <c>WsClient.ConnectAsync</c>).
    /// </summary>
    public async Task<bool> ConnectAsync(Task<bool> connecting, CancellationToken cancellationToken)
    {
        if (!await connecting.ConfigureAwait(false))
            return false;
        var upgraded = Volatile.Read(ref _done)?.Task ?? Task.FromResult(false);
        using (var delay = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken))
        {
            var timeout = Task.Delay(options.HandshakeTimeout, delay.Token);
            var first = await Task.WhenAny(upgraded, timeout).ConfigureAwait(false);
            delay.Cancel(); // no timer left behind once the handshake is over
            if (first != upgraded)
            {
                client.DisconnectAsync();
                cancellationToken.ThrowIfCancellationRequested();
                throw new TimeoutException($"The server did not answer the WebSocket upgrade within {options.HandshakeTimeout.TotalSeconds:0.###} s (HandshakeTimeout).");
            }
        }

        if (await upgraded.ConfigureAwait(false))
            return true;
        throw new System.Net.WebSockets.WebSocketException(System.Net.WebSockets.WebSocketError.NotAWebSocket,
            Volatile.Read(ref _error) ?? "The connection closed during the WebSocket handshake.");
    }

    private void Fail(string error)
    {
        // The hook runs before the connect's waiter is released: whoever awaited the connect
        // finds OnWsError already called when the exception reaches it.
        Volatile.Write(ref _error, error);
        try
        {
            hooks.OnWsError(error);
        }
        finally
        {
            Finish(State.Failed);
            client.DisconnectOnProtocolError(error);
        }
    }

    private void Finish(State state)
    {
        Volatile.Write(ref _state, (int)state);
        _wait.PulseAll();
        Volatile.Read(ref _done)?.TrySetResult(state == State.Upgraded);
    }

    /// <summary>The server's answer as RFC 6455 4.1 (and RFC 7692 for the extension) asks a client to check it.</summary>
    private bool Check(HttpResponse response, out string error, out string? subProtocol, out WsDeflateParameters? deflate)
    {
        subProtocol = null;
        deflate = null;
        if (response.Status != 101)
        {
            error = $"The server refused the WebSocket upgrade: {response.Status} {response.StatusPhrase}.";
            return false;
        }

        if (!WsHandshake.HasToken(response, "Upgrade"u8, "websocket"u8))
        {
            error = "The server's 101 answer has no \"Upgrade: websocket\".";
            return false;
        }

        if (!WsHandshake.HasToken(response, "Connection"u8, "upgrade"u8))
        {
            error = "The server's 101 answer has no \"Connection: Upgrade\".";
            return false;
        }

        if (WsHandshake.CountFields(response, "Sec-WebSocket-Accept"u8) != 1
            || !response.TryGetHeader("Sec-WebSocket-Accept", out var accept)
            || !string.Equals(accept.Trim(), WsHandshake.ComputeAccept(_key!), StringComparison.Ordinal))
        {
            error = "The server's Sec-WebSocket-Accept does not match the key sent.";
            return false;
        }

        var protocols = WsHandshake.ReadList(response, "Sec-WebSocket-Protocol"u8);
        if (protocols.Count > 1 || (protocols.Count == 1 && !_offeredProtocols!.Contains(protocols[0])))
        {
            error = "The server chose a subprotocol that was not offered.";
            return false;
        }

        subProtocol = protocols.Count == 1 ? protocols[0] : null;
        var extensions = WsHandshake.JoinLines(response, "Sec-WebSocket-Extensions"u8);
        if (extensions is not null)
        {
            if (!_offeredDeflate)
            {
                error = $"The server answered with extensions that were not offered: {extensions}.";
                return false;
            }

            if (!WsDeflateNegotiation.TryAccept(extensions, options.Deflate!, out var agreed, out var reason))
            {
                error = $"The server's Sec-WebSocket-Extensions is not acceptable: {reason}";
                return false;
            }

            deflate = agreed.IsEnabled ? agreed : null;
        }

        error = string.Empty;
        return true;
    }
}
