using System;
using System.Net;
using System.Net.Sockets;
using System.Threading.Tasks;

namespace NetServer.Examples;

/// <summary>
/// The operator's side of a server: starts it, then reads console lines. An empty line (or the
/// end of input) stops the server, "!" restarts it, and anything else is announced as
/// "(admin) text" to whoever the server reaches (the chat's members, a multicast group), if anyone.
/// </summary>
internal static class ServerConsole
{
    /// <summary>Typed at the console, restarts the server.</summary>
    public const string RestartCommand = "!";

    /// <summary>Put in front of every line the operator announces.</summary>
    public const string AdminPrefix = "(admin) ";

    /// <summary>
    /// Runs a UDP server until the operator stops it. With <paramref name="multicastEndpoint"/> it
    /// starts with it and multicasts each announcement as one datagram; without, it announces nothing.
    /// </summary>
    /// <returns>The process exit code.</returns>
    public static Task<int> RunAsync(UdpServer server, string title, EndPoint? multicastEndpoint = null)
    {
        Func<bool> start = multicastEndpoint is null ? server.Start : () => server.Start(multicastEndpoint);
        Func<string, bool>? announce = multicastEndpoint is null ? null : text => server.Multicast(text) > 0;
        return RunAsync(title, new Controls(start, server.StopAsync, () => server.IsStarted, () => server.Endpoint, announce));
    }

    /// <summary>Runs the server behind <paramref name="server"/> until the operator stops it.</summary>
    /// <returns>The process exit code.</returns>
    public static async Task<int> RunAsync(string title, Controls server)
    {
        Console.WriteLine($"{title} starting...");
        if (!TryStart(server))
            return 1;
        Console.WriteLine(server.Announce is null
            ? $"Type '{RestartCommand}' to restart the server, or an empty line to stop it."
            : $"Type a line to send it to everyone, '{RestartCommand}' to restart the server, or an empty line to stop it.");

        while (Console.ReadLine() is { Length: > 0 } line)
        {
            if (line == RestartCommand)
            {
                Console.WriteLine("Restarting...");
                if (server.IsStarted())
                    await server.StopAsync();
                TryStart(server);
            }
            else if (server.Announce is null)
            {
                Console.WriteLine($"This server sends nothing of its own: type '{RestartCommand}' to restart it, or an empty line to stop it.");
            }
            else if (!server.Announce(AdminPrefix + line) && !server.IsStarted())
            {
                // A running server that could not send has said why through its OnError.
                Console.WriteLine($"The server is not running; type '{RestartCommand}' to start it again.");
            }
        }

        Console.WriteLine("Stopping...");
        await server.StopAsync();
        Console.WriteLine("Stopped");
        return 0;
    }

    private static bool TryStart(Controls server)
    {
        try
        {
            server.Start();
        }
        catch (SocketException e)
        {
            Console.WriteLine($"Cannot listen on {server.Endpoint()}: {e.Message}");
            return false;
        }

        // The bound endpoint: with port 0 this shows the port the system picked.
        Console.WriteLine($"Listening on {server.Endpoint()}");
        return true;
    }

    /// <summary>
    /// What the console does to a server. <see cref="Announce"/> sends an operator's line to whoever
    /// the server reaches and says whether it went; null for a server that reaches no one of its own accord.
    /// </summary>
    public sealed record Controls(
        Func<bool> Start,
        Func<Task> StopAsync,
        Func<bool> IsStarted,
        Func<EndPoint> Endpoint,
        Func<string, bool>? Announce);
}
