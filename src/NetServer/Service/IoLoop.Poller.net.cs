using NetServer.Service;
using System.IO;

namespace NetServer;

/// <summary>The loop's own socket transport (Linux): an epoll poller the loop thread sleeps in.</summary>
public sealed partial class IoLoop
{
    private LoopPoller? _poller;
    private string? _pollerFailure;

    /// <summary>Null when this loop polls sockets itself; otherwise why it cannot (see <see cref="IoService.NativeTransportUnavailableReason"/>).</summary>
    internal string? PollerFailure => _pollerFailure;

    private bool HasPoller => _poller is not null;

    private void StartPoller() => _poller ??= LoopPoller.TryCreate(out _pollerFailure);

    private void WakePoller() => _poller?.Wake();

    private int PollOnce(int timeoutMilliseconds) => _poller!.Poll(timeoutMilliseconds, Service);

    private void AbandonPolled()
    {
        if (_poller is not { } poller)
            return;
        foreach (var registration in poller.Close())
        {
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
    internal PollRegistration? Register(Socket socket, IPollOwner owner, bool inline)
    {
        var poller = _poller;
        if (poller is null || (Volatile.Read(ref _state) & Closed) != 0)
            return null;
        try
        {
            var registration = new PollRegistration(this, owner, socket.SafeHandle, inline) { Poller = poller };
            return poller.Add(registration) ? registration : null;
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
