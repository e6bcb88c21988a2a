using System.IO;
using NetServer.Tls;

namespace NetServer.Streams;

/// <summary>
/// The same engine over a secure layer (TLS). Plain connections and secure ones share the
/// lifecycle, the send queue and its flusher role, limits, statistics and hooks; they differ in
/// two primitives only: how received bytes are read (socket reads vs. stream reads, see
/// LayerReceive) and how the flusher hands bytes on (non-blocking socket sends vs. stream writes,
/// see LayerSend). Until the handshake has produced the stream, the handshake holds the flusher
/// role, so sends only queue, and the receive loop waits.
/// </summary>
internal sealed partial class Connection
{
    private readonly SecureLayer? _layer;
    private readonly ReadGate? _gate; // with a layer: lets its shutdown run only while no read decrypts
    private readonly TaskCompletionSource<bool>? _handshake;
    private Stream? _stream;
    private int _secured;        // the handshake succeeded: the stream carries the application bytes
    private int _receiveWanted;  // someone asked for the receive loop before the handshake finished
    private int _handshakeOutcome; // 0 while it runs, then HandshakeSucceeded or HandshakeFailed
    private WaitPoint _handshakeWait;

    private const int HandshakeSucceeded = 1;
    private const int HandshakeFailedOutcome = 2;

    /// <summary>True once the handshake of a secure connection has succeeded (always false without a layer).</summary>
    public bool IsSecured => Volatile.Read(ref _secured) != 0;

    /// <summary>True while a secure connection's handshake is still running.</summary>
    public bool IsHandshaking => _layer is not null && !IsSecured && !IsSocketClosed && !IsHandshakeOver;

    private bool IsHandshakeOver => Volatile.Read(ref _handshakeOutcome) != 0;

    /// <summary>The stream of a secure connection once its handshake succeeded.</summary>
    public Stream? SecureStream => IsSecured ? _stream : null;

    /// <summary>
    /// After the connect hooks (the creator still holds the connection): a plain connection is
    /// ready at once: OnEmpty through the flusher, then the receive loop. A secure one runs its
    /// handshake first and does the same once it succeeds. No handshake hook runs once the
    /// connection began to close; a close with nothing queued abandons the handshake (see
    /// <see cref="BeginClose"/>), one with bytes queued lets it finish silently to send them.
    /// </summary>
    public void Open(bool startReceiving)
    {
        StartIdleTimer(); // after the connect hooks, which may set the option
        if (_layer is null)
        {
            if (IsOpen)
                RaiseReady();
            FlushLoop(); // as the flusher since the constructor: what the hooks queued, then OnEmpty
            if (startReceiving)
                StartReceiving();
            return;
        }

        if (startReceiving)
            StartReceiving(); // only noted until the handshake succeeds
        _ = HandshakeAsync(_layer);
    }

    /// <summary>
    /// Completes with true once the handshake succeeded (and OnHandshaked has run), false when it
    /// failed or the connection closed first. Plain connections complete at once with true.
    /// </summary>
    public Task<bool> WhenHandshakeDone() => _handshake?.Task ?? Task.FromResult(true);

    /// <summary>
    /// Blocks until the handshake is over (see <see cref="WhenHandshakeDone"/>) and returns whether it
    /// succeeded. It sets no limit of its own: the handshake always ends, by its own timeout, by a
    /// close (Disconnect, Dispose) or by the peer. It waits inside a hook too (a synchronous connect
    /// blocks there anyway): the handshake never needs the waiting thread.
    /// </summary>
    public bool WaitForHandshake()
    {
        if (_handshake is null)
            return true;
        _handshakeWait.WaitUntil(this, static c => c.IsHandshakeOver, Timeout.InfiniteTimeSpan);
        return Volatile.Read(ref _handshakeOutcome) == HandshakeSucceeded;
    }

    private async Task HandshakeAsync(SecureLayer layer)
    {
        Exception? failure = null;
        Stream? stream = null;

        // No handshake hook may follow OnDisconnecting; a close that abandoned the handshake (in a
        // connect hook, or in OnHandshaking) closed the socket: then there is no handshake at all.
        if ((IsOpen && !RaiseHandshakeHook(static owner => owner.InvokeHandshaking())) || IsSocketClosed)
        {
            HandshakeOver(false);
            return;
        }

        var measured = Diagnostics.ConnectionMetrics.TlsHandshakeStarted(_owner);

        // On a polling loop the handshake's reads and writes complete on the thread pool, so its
        // key exchange and signatures never hold up the other connections of the loop.
        if (_poll is { } poll)
            poll.Handshaking = true;
        using (var timeout = new CancellationTokenSource(layer.HandshakeTimeout))
        {
            try
            {
#if NET
                // Its start leaves the loop thread too: until its first wait SslStream runs on the
                // caller, and that part holds the costly steps (a client's key share; a server's
                // signature when the peer's hello already waits). ForceYielding goes to the thread
                // pool whatever context or scheduler the application put on the loop thread; the
                // time queued there counts toward the handshake's timeout.
                if (_poll is { Loop.IsCurrent: true })
                    await Task.CompletedTask.ConfigureAwait(ConfigureAwaitOptions.ForceYielding);
#endif
                stream = await layer.AuthenticateAsync(IoLoop.TransportStream(_socket, _poll), _gate!, timeout.Token).ConfigureAwait(false);
            }
            catch (OperationCanceledException) when (timeout.IsCancellationRequested)
            {
                failure = new TimeoutException(
                    $"The TLS handshake did not complete within {layer.HandshakeTimeout.TotalSeconds:0.###} s; the connection was closed.");
            }
            catch (Exception e)
            {
                failure = e;
            }
        }

        if (_poll is { } polled)
            polled.Handshaking = false;
        Diagnostics.ConnectionMetrics.TlsHandshakeEnded(_owner, measured, stream is null ? null : layer.ProtocolVersion(stream),
            stream is null ? failure ?? new OperationCanceledException() : null);
        if (stream is null)
        {
            // A connection closed meanwhile (Stop, Dispose, an abandoning Disconnect, the linger
            // timeout) ended the handshake: not its failure. One that is closing gracefully (to
            // send what it queued) keeps the failure but raises no hook after OnDisconnecting.
            if (!IsSocketClosed)
            {
                failure ??= new IOException("The handshake produced no stream.");
                Diagnostics.ListenerEvents.TlsHandshakeFailed(_owner, this, failure);
                if (IsOpen)
                    RaiseHandshakeFailed(failure);
                Abort(DisconnectReason.HandshakeFailed, failure);
            }

            HandshakeOver(false);
            return;
        }

        Volatile.Write(ref _stream, stream);
        Interlocked.Exchange(ref _secured, 1);
        if (IsOpen && RaiseHandshakeHook(static owner => owner.InvokeHandshaked()) && IsOpen)
            RaiseReady();
        HandshakeOver(IsOpen);

        // Same order as a plain connection: OnEmpty through the flusher, then the receive loop.
        // A graceful close begun meanwhile still gets what was queued, then the layer's close.
        FlushLoop();
        if (Interlocked.CompareExchange(ref _receiveWanted, 0, 0) != 0)
            StartReceiving();
    }

    /// <summary>Ends the handshake phase: wakes waiters; on failure gives up the flusher role the handshake held.</summary>
    private void HandshakeOver(bool succeeded)
    {
        Volatile.Write(ref _handshakeOutcome, succeeded ? HandshakeSucceeded : HandshakeFailedOutcome);
        _handshakeWait.PulseAll();

        _handshake!.TrySetResult(succeeded);

        if (!IsSecured)
        {
            lock (_sendLock)
                _flushing = false;
            ReleaseReference();
        }
    }

    /// <summary>
    /// StartReceiving before the handshake succeeded only notes the wish; the handshake starts the
    /// loop. Returns true if the loop may start now.
    /// </summary>
    private bool MayReceive()
    {
        if (_layer is null)
            return true;
        Interlocked.Exchange(ref _receiveWanted, 1);
        return Volatile.Read(ref _secured) != 0; // the handshake re-checks the wish after setting this
    }

    private bool RaiseHandshakeHook(Action<StreamConnection> hook)
    {
        CallbackScope.Enter(this);
        try
        {
            hook(_owner);
            return true;
        }
        catch (Exception e)
        {
            HandlerFailed(e);
            return false;
        }
        finally
        {
            CallbackScope.Exit();
        }
    }

    private void RaiseHandshakeFailed(Exception failure)
    {
        CallbackScope.Enter(this);
        try
        {
            _owner.InvokeHandshakeFailed(failure);
        }
        catch (Exception e)
        {
            // The connection is being closed for the handshake failure; keep the hook's own failure visible too.
            Interlocked.CompareExchange(ref _exception, e, null);
        }
        finally
        {
            CallbackScope.Exit();
        }
    }
}
