using System;

namespace NetServer.Examples;

/// <summary>
/// The user's side of a UDP client: connects it, then reads console lines. "!" reconnects (closes
/// the socket and opens a new one), an empty line (or the end of input) quits, and any other line
/// is sent to the server as one datagram, if the client talks to one.
/// </summary>
internal static class ClientConsole
{
    /// <summary>Typed at the console, reconnects the client.</summary>
    public const string ReconnectCommand = "!";

    /// <summary>Runs <paramref name="client"/> until the user quits; typed lines are sent when <paramref name="sendsLines"/>.</summary>
    public static void Run(UdpClient client, string title, bool sendsLines)
    {
        Console.WriteLine($"{title} starting...");

        // A failed connect has been reported through OnError; "!" tries again.
        client.Connect();
        Console.WriteLine(sendsLines
            ? $"Type a line to send it, '{ReconnectCommand}' to reconnect, or an empty line to quit."
            : $"Type '{ReconnectCommand}' to reconnect, or an empty line to quit.");

        while (Console.ReadLine() is { Length: > 0 } line)
        {
            if (line == ReconnectCommand)
            {
                client.Disconnect();
                client.Connect();
            }
            else if (!sendsLines)
            {
                Console.WriteLine($"This client only listens: type '{ReconnectCommand}' to reconnect, or an empty line to quit.");
            }
            else if (!client.SendAsync(line) && !client.IsConnected)
            {
                // A connected client that could not send has said why through its OnError.
                Console.WriteLine($"Not connected: the line was not sent; type '{ReconnectCommand}' to connect again.");
            }
        }

        client.Disconnect();
        Console.WriteLine("Bye");
    }
}
