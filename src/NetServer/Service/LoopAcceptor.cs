using System.Collections.Generic;
using System.Runtime.CompilerServices;

namespace NetServer.Service;

/// <summary>What the loops accepting for a listening server tell it (see <see cref="LoopAcceptor"/>).</summary>
internal interface IAcceptHost
{
    /// <summary>A connection a loop accepted, on that loop's thread.</summary>
    void Accepted(Socket socket, int generation);

    /// <summary>An accept failed; false when the server no longer accepts for <paramref name="generation"/> (the loops stop).</summary>
    bool AcceptFailed(SocketError error, int generation);

    /// <summary>The service stopped under a server still listening: the runtime's engine accepts from now on.</summary>
    void LoopsAbandoned(Socket listener, int generation);
}

/// <summary>
/// One loop's share of accepting for a listener: every loop of the service polls the listener
/// (level-triggered, exclusively: a new connection wakes one waiting loop) and the loop woken
/// accepts it on its own thread, so a connection costs no wake of the runtime's socket thread and
/// no thread-pool hop before it reaches its loop.
/// </summary>
internal sealed class LoopAcceptor : IPollOwner
{
    /// <summary>How long accepting pauses after the system ran out of descriptors or buffers.</summary>
    private static readonly TimeSpan s_exhaustedPause = TimeSpan.FromMilliseconds(50);

    private readonly IAcceptHost _host;
    private readonly Socket _listener;
    private readonly IoLoop _loop;
    private readonly int _generation;
    private readonly StrongBox<int> _live; // acceptors of this listener the service has not abandoned
    private PollRegistration? _registration;
    private int _stopped;

    private LoopAcceptor(IAcceptHost host, Socket listener, IoLoop loop, int generation, StrongBox<int> live)
    {
        _host = host;
        _listener = listener;
        _loop = loop;
        _generation = generation;
        _live = live;
    }

    /// <summary>
    /// Accepting for <paramref name="listener"/> on every loop of <paramref name="service"/> that
    /// polls sockets; null (nothing changed) when none does: the runtime's engine accepts.
    /// </summary>
    public static LoopAcceptor[]? Start(IoService service, Socket listener, IAcceptHost host, int generation)
    {
        listener.Blocking = false; // an accept a loop makes must never wait
        // One count per acceptor, taken before it registers (a loop may stop and abandon it at once),
        // and one held by this start: no abandon during the start can hand accepting back to the
        // runtime while loops are still being registered, nor be lost to a count set afterwards.
        var live = new StrongBox<int>(1);
        var acceptors = new List<LoopAcceptor>(service.Threads);
        foreach (var loop in service.Loops)
        {
            var acceptor = new LoopAcceptor(host, listener, loop, generation, live);
            Interlocked.Increment(ref live.Value);
            if (acceptor.Register())
                acceptors.Add(acceptor);
            else
                Interlocked.Decrement(ref live.Value); // never polled: nothing will abandon it
        }

        // Every acceptor was abandoned during the start (the service stopped) or none registered:
        // the runtime's engine accepts, as without a service.
        if (Interlocked.Decrement(ref live.Value) == 0)
        {
            listener.Blocking = true;
            return null;
        }

        foreach (var acceptor in acceptors)
            _ = acceptor.RunAsync();
        return acceptors.ToArray();
    }

    /// <summary>The server stops: the loops let go of the listener (before or after it is closed).</summary>
    public static void Stop(LoopAcceptor[] acceptors)
    {
        foreach (var acceptor in acceptors)
        {
            Interlocked.Exchange(ref acceptor._stopped, 1);
            if (Interlocked.Exchange(ref acceptor._registration, null) is { } registration)
                IoLoop.Unregister(registration);
        }
    }

    /// <summary>The service stopped: this loop accepts no more; the last one to go hands accepting back to the runtime.</summary>
    void IPollOwner.Abandon()
    {
        if (Interlocked.Exchange(ref _stopped, 1) != 0)
            return;
        if (Interlocked.Exchange(ref _registration, null) is { } registration)
            IoLoop.Unregister(registration);
        if (Interlocked.Decrement(ref _live.Value) == 0)
            _host.LoopsAbandoned(_listener, _generation);
    }

    private bool Register()
    {
        var registration = _loop.Register(_listener, this, inline: true, listener: true);
        if (registration is null)
            return false;

        // Published before the stop flag is read (full fences both sides): a stop either sees the
        // registration or is seen here.
        Interlocked.Exchange(ref _registration, registration);
        if (Volatile.Read(ref _stopped) != 0 && Interlocked.Exchange(ref _registration, null) is { } late)
            IoLoop.Unregister(late);
        return true;
    }

    private async Task RunAsync()
    {
        try
        {
            await AcceptAsync().ConfigureAwait(false);
        }
        finally
        {
            // However it ended, the loop lets go of the listener: a level-triggered listener left
            // registered (one closed reports a hang-up for good) would keep the loop spinning.
            if (Interlocked.Exchange(ref _registration, null) is { } registration)
                IoLoop.Unregister(registration);
        }
    }

    private async Task AcceptAsync()
    {
        while (Volatile.Read(ref _registration) is { } registration)
        {
            // Completes on the loop thread (inline registration): the accept and, for a session
            // whose hooks run on this loop, its whole set-up happen inside the loop's turn.
            var waited = await registration.WaitReadableAsync().ConfigureAwait(false);
            if (!waited.IsSuccess)
                return; // a stop, or the service stopped

            Socket socket;
            try
            {
                socket = _listener.Accept();
            }
            catch (SocketException e) when (e.SocketErrorCode == SocketError.WouldBlock)
            {
                continue; // another loop took it
            }
            catch (SocketException e)
            {
                if (!_host.AcceptFailed(e.SocketErrorCode, _generation))
                    return;
                if (e.SocketErrorCode is SocketError.InvalidArgument or SocketError.NotSocket or SocketError.OperationNotSupported)
                    return; // no longer a listener (shut down under us): waiting again would spin
                if (SocketErrors.IsResourceExhaustion(e.SocketErrorCode))
                    await PauseAsync(registration).ConfigureAwait(false);
                continue;
            }
            catch (ObjectDisposedException)
            {
                return; // the server stopped
            }

            _host.Accepted(socket, _generation);
        }
    }

    /// <summary>
    /// Out of descriptors or buffers, the connection stays pending and a level-triggered listener
    /// stays ready: the loop would spin on it. It leaves the poller for a while, then comes back.
    /// </summary>
    private async Task PauseAsync(PollRegistration registration)
    {
        if (Interlocked.CompareExchange(ref _registration, null, registration) != registration)
            return; // stopped meanwhile
        IoLoop.Unregister(registration);
        await Task.Delay(s_exhaustedPause).ConfigureAwait(false);
        if (Volatile.Read(ref _stopped) == 0 && !Register())
            ((IPollOwner)this).Abandon(); // the loop stopped meanwhile
    }
}
