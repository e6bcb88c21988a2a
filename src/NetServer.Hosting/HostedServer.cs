using System;
using System.Threading;
using System.Threading.Tasks;

namespace NetServer.Hosting;

/// <summary>
/// One registered server as the hosted service drives it. Servers share the generic
/// <see cref="StreamServer{TSession}"/> base and no non-generic one, so the registration captures
/// the few members the host needs as delegates instead of the core gaining an interface for it.
/// </summary>
internal sealed class HostedServer
{
    private readonly Func<bool> _start;
    private readonly Func<bool> _disconnectAll;
    private readonly Func<Task<bool>> _stop;

    private HostedServer(string name, object server, Func<bool> start, Func<bool> disconnectAll, Func<Task<bool>> stop)
    {
        Name = name;
        Server = server;
        _start = start;
        _disconnectAll = disconnectAll;
        _stop = stop;
    }

    public string Name { get; }

    public object Server { get; }

    public static HostedServer For<TSession>(string name, StreamServer<TSession> server)
        where TSession : StreamSession =>
        new(name, server, server.Start, server.DisconnectAll, server.StopAsync);

    public void Start()
    {
        if (!_start())
            throw new InvalidOperationException($"NetServer '{Name}' was already started; a hosted server is started by the host only.");
    }

    /// <summary>
    /// Closes the sessions gracefully (each sends what it has queued) while <paramref name="cancellationToken"/>
    /// (the host's shutdown timeout) allows, then stops the server, which aborts what is left.
    /// </summary>
    public async Task StopAsync(CancellationToken cancellationToken)
    {
        try
        {
            // DisconnectAll blocks until the sessions finished (bounded by the engine's own timeout): off the host's thread.
            await Task.Run(_disconnectAll, CancellationToken.None).WaitAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
            // Out of time for a graceful close: StopAsync below aborts the sessions left.
        }

        await _stop().ConfigureAwait(false);
    }
}
