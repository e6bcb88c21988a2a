namespace NetServer;

/// <summary>The server's sessions on the loops of an <see cref="IoService"/>.</summary>
public abstract partial class StreamServer<TSession>
{
    private IoService? _service;
    private bool _hooksOnLoop = true;

    /// <summary>
    /// The I/O service whose loops this server's sessions are pinned to (round robin, one loop per
    /// session), or null (the default) for the thread-pool transport. It applies to sessions accepted after it is
    /// set; start the service first. On Linux (net10.0 build) a loop polls its sessions' sockets itself
    /// and runs their receive hooks on its thread (TLS sessions too, their handshakes on the thread
    /// pool); elsewhere the sessions keep the default transport (see <see cref="IoService.NativeTransportUnavailableReason"/>).
    /// </summary>
    public IoService? Service
    {
        get => Volatile.Read(ref _service);
        set => Volatile.Write(ref _service, value);
    }

    /// <summary>
    /// With a <see cref="Service"/>: run the sessions' receive hooks (OnReceived, OnSent, OnEmpty)
    /// on their loop's thread (true, the default: no thread hop, the fastest), or on the thread pool
    /// (false: a hook that blocks, on a lock, a database or a synchronous call, then holds up only
    /// itself instead of every session of its loop).
    /// </summary>
    public bool OptionHooksOnLoop
    {
        get => Volatile.Read(ref _hooksOnLoop);
        set => Volatile.Write(ref _hooksOnLoop, value);
    }

    IoService? ISessionHost.Service => Service;

    bool ISessionHost.HooksOnLoop => OptionHooksOnLoop;
}
