using System;
using System.Threading.Tasks;

namespace NetServer.Examples;

/// <summary>
/// The rules of the chat, the same on every transport: each newcomer is greeted, every line a
/// member sends goes to all members, a member who sends "!" leaves, and the operator's lines go to
/// all members. Here for the line protocol of the stream transports; ChatRoom.WebSocket.cs holds the
/// same rules for the WebSocket chat, where a message is a WebSocket text message.
/// </summary>
internal static partial class ChatRoom
{
    /// <summary>The first line every member receives.</summary>
    public const string Greeting = "Welcome to the NetServer chat. Every line you send goes to everyone here; send '!' to leave.";

    /// <summary>Greets a member that has just connected.</summary>
    public static void Welcome(StreamSession session, string? from)
    {
        Joined(session, from);
        session.SendAsync(Greeting + ChatProtocol.LineEnd);
    }

    /// <summary>Passes every complete line of <paramref name="data"/> to all members of <paramref name="server"/>.</summary>
    public static void Relay<TSession>(StreamServer<TSession> server, StreamSession session, LineReader lines, ReadOnlySpan<byte> data)
        where TSession : StreamSession
    {
        while (lines.TryRead(ref data, out var line))
        {
            Heard(session, line);
            server.Multicast(line + ChatProtocol.LineEnd);

            // Disconnect from inside a hook returns at once; the "!" queued above is still sent first.
            if (line == ChatProtocol.LeaveCommand)
            {
                session.Disconnect();
                return;
            }
        }
    }

    /// <summary>Reports a member that has gone, with the reason.</summary>
    public static void Farewell(StreamSession session) =>
        Console.WriteLine($"Session {session.Id} left ({session.DisconnectReason})");

    /// <summary>Runs the operator's console of <paramref name="server"/>: an announcement goes to every member as one line.</summary>
    /// <returns>The process exit code.</returns>
    public static Task<int> RunConsoleAsync<TSession>(StreamServer<TSession> server, string title)
        where TSession : StreamSession =>
        ServerConsole.RunAsync(title, new ServerConsole.Controls(
            server.Start,
            server.StopAsync,
            () => server.IsStarted,
            () => server.Endpoint,
            text => server.Multicast(text + ChatProtocol.LineEnd)));

    private static void Joined(StreamSession session, string? from) =>
        Console.WriteLine(from is null ? $"Session {session.Id} joined" : $"Session {session.Id} joined from {from}");

    private static void Heard(StreamSession session, string message) => Console.WriteLine($"Session {session.Id}: {message}");
}
