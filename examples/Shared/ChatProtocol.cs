using System.IO;

namespace NetServer.Examples;

/// <summary>What the chat servers and clients agree on: UTF-8 text, one message per line.</summary>
internal static class ChatProtocol
{
    /// <summary>Ends every message, in both directions.</summary>
    public const string LineEnd = "\n";

    /// <summary>Sent by a member to leave the chat (and typed at a client's console, it disconnects).</summary>
    public const string LeaveCommand = "!";

    /// <summary>Where the Unix domain socket examples meet when no path is given.</summary>
    public static string DefaultSocketPath => Path.Combine(Path.GetTempPath(), "netserver-chat.sock");
}
