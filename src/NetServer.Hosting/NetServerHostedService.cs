using System.Collections.Generic;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using Microsoft.Extensions.Hosting;

namespace NetServer.Hosting;

/// <summary>Starts every registered server when the host starts and stops them, gracefully first, when it stops.</summary>
internal sealed class NetServerHostedService(IEnumerable<HostedServer> servers) : IHostedService
{
    private readonly HostedServer[] _servers = servers.ToArray();

    public Task StartAsync(CancellationToken cancellationToken)
    {
        var started = new List<HostedServer>();
        try
        {
            foreach (var server in _servers)
            {
                cancellationToken.ThrowIfCancellationRequested();
                server.Start();
                started.Add(server);
            }
        }
        catch
        {
            // One server failed to bind: the host will not run, so the ones already listening stop now.
            foreach (var server in started)
                _ = server.StopAsync(new CancellationToken(canceled: true));
            throw;
        }

        return Task.CompletedTask;
    }

    public Task StopAsync(CancellationToken cancellationToken) =>
        Task.WhenAll(_servers.Select(server => server.StopAsync(cancellationToken)));
}
