using System;

namespace NetServer.Tls;

/// <summary>
/// Lets a secure layer's shutdown (TLS close_notify) run only at a moment when none of the layer's
/// reads can be decrypting. On Linux, SslStream's reads and its shutdown both work on OpenSSL's SSL
/// object, and OpenSSL does not support SSL_read and SSL_shutdown at once; yet a connection's
/// receive loop has a read under way nearly all the time. A layer read decrypts only between
/// getting bytes from the transport and returning them: not while it waits inside the transport
/// for bytes (parked; the transport stream, <c>GatedStream</c>, says when), and not when no read
/// is under way. <see cref="Run"/> runs the shutdown at once at such a moment, or else as soon as
/// the read parks or ends; a transport read that completes meanwhile waits on the gate's lock
/// before its bytes go up to be decrypted, so the shutdown always finishes first.
/// </summary>
/// <remarks>
/// The lock is held only to flip these flags, except around the exclusive work itself (OpenSSL's
/// shutdown and the start of the close_notify write, once per connection): never across a wait for
/// the network.
/// </remarks>
internal sealed class ReadGate
{
    private readonly object _lock = new();
    private int _reads;    // layer reads under way (EnterRead..ExitRead); an ended read may be counted a moment longer
    private bool _parked;  // the layer's read waits in the transport for bytes: it decrypts nothing
    private Action<object>? _work;
    private object? _workState;
    private volatile bool _transportEnded;

    /// <summary>
    /// A read of the transport returned no bytes: the peer's socket ended. When the layer's read
    /// returns its end of stream before this is set, the layer ended on the peer's close_notify.
    /// </summary>
    public bool HasTransportEnded => _transportEnded;

    /// <summary>The transport stream read the end of the socket's stream.</summary>
    public void TransportEnded() => _transportEnded = true;

    /// <summary>Before each read of the layer's stream.</summary>
    public void EnterRead()
    {
        lock (_lock)
            _reads++;
    }

    /// <summary>After each read of the layer's stream, however it ended: runs work that waited for it.</summary>
    public void ExitRead()
    {
        lock (_lock)
        {
            _reads--;
            RunWaitingWorkLocked();
        }
    }

    /// <summary>The layer's read starts waiting in the transport for bytes: runs work that waited for this.</summary>
    public void Park()
    {
        lock (_lock)
        {
            _parked = true;
            RunWaitingWorkLocked();
        }
    }

    /// <summary>The transport read got its bytes (or failed); the layer may decrypt once this returns.</summary>
    public void Unpark()
    {
        lock (_lock)
            _parked = false;
    }

    /// <summary>
    /// Runs <paramref name="work"/> (synchronous, short: it must not wait for the network) while no
    /// layer read can decrypt: at once on this thread if none can now, else later on the thread of
    /// the read, when it parks or ends. One piece of work at a time.
    /// </summary>
    public void Run(Action<object> work, object state)
    {
        lock (_lock)
        {
            if (_reads != 0 && !_parked)
            {
                _work = work;
                _workState = state;
                return;
            }

            work(state);
        }
    }

    private void RunWaitingWorkLocked()
    {
        if (_work is not { } work || (_reads != 0 && !_parked))
            return;
        var state = _workState!;
        _work = null;
        _workState = null;
        work(state);
    }
}
