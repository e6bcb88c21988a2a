using System;
using System.Net.Sockets;
using System.Threading.Tasks;

namespace NetServer.Examples;

/// <summary>
/// The operator's side of a chat server: starts it, then reads console lines. An empty line (or
/// the end of input) stops the server, "!" restarts it, anything else goes to every member as
/// "(admin) text".
/// </summary>
internal static class ServerConsole
{
    /// <summary>Runs <paramref name="server"/> until the operator stops it; returns the process exit code.</summary>
    public static async Task<int> RunAsync<TSession>(StreamServer<TSession> server, string title)
        where TSession : StreamSession
    {
        Console.WriteLine($"{title} starting...");
        if (!TryStart(server))
            return 1;
        Console.WriteLine("Type a line to send it to everyone, '!' to restart the server, or an empty line to stop it.");

        while (Console.ReadLine() is { Length: > 0 } line)
        {
            if (line == ChatProtocol.LeaveCommand)
            {
                Console.WriteLine("Restarting...");
                if (server.IsStarted)
                    await server.StopAsync();
                TryStart(server);
            }
            else if (!server.Multicast($"(admin) {line}{ChatProtocol.LineEnd}"))
            {
                Console.WriteLine("The server is not running; type '!' to start it again.");
            }
        }

        Console.WriteLine("Stopping...");
        await server.StopAsync();
        Console.WriteLine("Stopped");
        return 0;
    }

    private static bool TryStart<TSession>(StreamServer<TSession> server)
        where TSession : StreamSession
    {
        try
        {
            server.Start();
        }
        catch (SocketException e)
        {
            Console.WriteLine($"Cannot listen on {server.Endpoint}: {e.Message}");
            return false;
        }

        // The bound endpoint: with port 0 this shows the port the system picked.
        Console.WriteLine($"Listening on {server.Endpoint}");
        return true;
    }
}
