using System;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;

namespace NetServer.Tests.Infrastructure;

/// <summary>A raw peer that never goes quiet: it sends chunks of noise until the test stops it or the connection ends.</summary>
public static class Chatter
{
    public static Task SendUntilStoppedAsync(Socket socket, int chunk, CancellationToken stop) => Task.Run(async () =>
    {
        var noise = new byte[chunk];
        try
        {
            while (!stop.IsCancellationRequested)
                await socket.SendAsync(noise, SocketFlags.None, stop);
        }
        catch (Exception e) when (e is SocketException or OperationCanceledException or ObjectDisposedException)
        {
            // Stopped by the test, or the server closed.
        }
    }, CancellationToken.None);
}
