
namespace NetServer;

/// <summary>The socket on a loop of an <see cref="IoService"/>.</summary>
public abstract partial class UdpPeer
{
    private IoService? _service;
    private bool _hooksOnLoop = true;

    /// <summary>
    /// The I/O service whose loops run this socket (one loop, the next in turn, per
    /// <c>Start</c>/<c>Connect</c>), or null (the default) for the thread-pool mode. Set it before
    /// <c>Start</c>/<c>Connect</c>, and start the service first. On Linux (net10.0 build) the loop
    /// polls the socket itself, receives and sends datagrams in batches (<c>recvmmsg</c>,
    /// <c>sendmmsg</c>) and runs the hooks on its thread; elsewhere the socket keeps the default
    /// mode (see <see cref="IoService.NativeTransportUnavailableReason"/>). <see cref="OptionDedicatedThread"/>
    /// takes precedence: such a socket keeps its own thread.
    /// </summary>
    public IoService? Service
    {
        get => Volatile.Read(ref _service);
        set => Volatile.Write(ref _service, value);
    }

    /// <summary>
    /// With a <see cref="Service"/>: run OnReceived, OnSent and OnError on the loop's thread (true,
    /// the default: no thread hop), or on the thread pool (false: a hook that blocks then holds up
    /// only itself instead of every socket and connection of its loop).
    /// </summary>
    public bool OptionHooksOnLoop
    {
        get => Volatile.Read(ref _hooksOnLoop);
        set => Volatile.Write(ref _hooksOnLoop, value);
    }

    /// <summary>The service the socket runs on: its own, or the shared one of NETSERVER_TRANSPORT=loops.</summary>
    internal IoService? LoopService => Service ?? IoService.Ambient;
}
