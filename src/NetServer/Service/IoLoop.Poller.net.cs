using NetServer.Service;
using System.IO;

namespace NetServer;

/// <summary>The loop's own socket transport (Linux): an epoll poller the loop thread sleeps in.</summary>
public sealed partial class IoLoop
{
    private LoopPoller? _poller;
    private string? _pollerFailure;
    private volatile bool _pollerBroken; // epoll failed: the loop waits on its gate until its service stops

    /// <summary>Null when this loop polls sockets itself; otherwise why it cannot (see <see cref="IoService.NativeTransportUnavailableReason"/>).</summary>
    internal string? PollerFailure => _pollerFailure;

    private bool HasPoller => _poller is not null && !_pollerBroken;

    /// <summary>Whether this loop polls sockets now (a socket registered with it is read and written by it).</summary>
    internal bool PollsSockets => HasPoller && (Volatile.Read(ref _state) & Closed) == 0;

    private void StartPoller()
    {
        _pollerBroken = false;
        _poller ??= LoopPoller.TryCreate(out _pollerFailure);
    }

    private void WakePoller() => _poller?.Wake();

    private int PollOnce(int timeoutMilliseconds)
    {
        var count = _poller!.Poll(timeoutMilliseconds, Service, out var failure);
        if (count >= 0)
            return count;

        // Not expected, and not to be retried in a spin: the connections pinned here end, new ones
        // get the default transport (Register refuses), and the loop goes on running posted work,
        // waiting on its gate (a post that still wakes the eventfd is seen at the next turn).
        _pollerFailure = failure;
        _pollerBroken = true;
        Service.ReportError(new InvalidOperationException(failure));
        AbandonPolled();
        return 0;
    }

    /// <summary>Makes this loop's poller fail at its next wait (tests of the fallback).</summary>
    internal void FailPollerForTests() => _poller?.FailNextPollForTests();

    private void AbandonPolled()
    {
        if (_poller is not { } poller)
            return;
        foreach (var registration in poller.Close())
        {
            // The poller lets the socket go first (the loop polls no more): an owner that closes its
            // socket in Abandon before it even stored the registration (a set-up on another thread
            // that raced this stop) would otherwise wait forever in the close for the poller's
            // reference on the handle, and the loop's stop with it. Its waiters still end through
            // the owner (Unregister), so the close it makes reads as the service's stop.
            poller.Remove(registration);
            try
            {
                registration.Owner.Abandon();
            }
            catch (Exception e)
            {
                Service.ReportError(e);
            }
        }
    }

    private void StopPoller()
    {
        _poller?.Dispose();
        _poller = null;
    }

    /// <summary>
    /// Pins <paramref name="socket"/> to this loop: the loop polls it from now on. Null when the
    /// loop does not poll sockets (not Linux, or not started): the caller uses the default transport.
    /// </summary>
    /// <remarks>
    /// A <paramref name="listener"/> is polled level-triggered and exclusively (see
    /// <see cref="LoopPoller.Add"/>): its waiter accepts one connection per signal.
    /// </remarks>
    internal PollRegistration? Register(Socket socket, IPollOwner owner, bool inline, bool listener = false)
    {
        var poller = _poller;
        if (poller is null || _pollerBroken || (Volatile.Read(ref _state) & Closed) != 0)
            return null;
        try
        {
            var registration = new PollRegistration(this, owner, socket.SafeHandle, inline, socket.SocketType == SocketType.Dgram) { Poller = poller };
            return poller.Add(registration, listener) ? registration : null;
        }
        catch (ObjectDisposedException)
        {
            return null;
        }
    }

    /// <summary>
    /// The stream a secure layer (TLS) runs over: for a connection pinned to a polling loop, one
    /// that reads and writes the socket itself and waits through the loop's poller; otherwise a
    /// <see cref="NetworkStream"/>. Neither closes the socket.
    /// </summary>
    internal static Stream TransportStream(Socket socket, PollRegistration? registration) =>
        registration is null ? new NetworkStream(socket, ownsSocket: false) : new PolledSocketStream(socket, registration);

    /// <summary>Before the socket closes: completes its waiters (aborted) and takes it out of the poller.</summary>
    internal static void Unregister(PollRegistration registration)
    {
        registration.Close();
        ((LoopPoller)registration.Poller!).Remove(registration);
    }
}
