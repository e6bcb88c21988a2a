using System;
using System.Net;
using System.Net.WebSockets;
using System.Text;
using System.Threading.Tasks;

namespace NetServer.Examples;

/// <summary>
/// The chat's rules over WebSocket, for WsChatServer and WssChatServer: a member is a session that
/// has upgraded, a message is one text message (no line framing: WebSocket keeps messages whole),
/// and the server also serves the chat page (www/ws) at <see cref="PagePrefix"/> over plain HTTP.
/// The two servers differ only in their base classes, which have every member the rules use under
/// the same names: their classes name <see cref="IWsRoom"/> and <see cref="IWsMember"/> and write nothing more.
/// </summary>
internal static partial class ChatRoom
{
    /// <summary>The URL prefix the chat page is served at.</summary>
    public const string PagePrefix = "/chat";

    /// <summary>
    /// The page's folder under www/. One page serves both servers: it opens ws:// or wss:// as it
    /// was itself loaded over http:// or https://.
    /// </summary>
    public const string PageFolderName = "ws";

    /// <summary>Sent when the server stops or restarts: a browser reconnects after it, as after any close other than a member leaving.</summary>
    private const string GoingAwayReason = "The chat server is going away";

    /// <summary>What the chat needs of a WebSocket server: WsServer and WssServer have all of it.</summary>
    public interface IWsRoom
    {
        EndPoint Endpoint { get; }

        bool IsStarted { get; }

        bool Start();

        Task<bool> StopAsync();

        bool MulticastText(string text);

        bool MulticastText(byte[] buffer, long offset, long size);

        bool CloseAll(int status, string text);

        bool DisconnectAll();
    }

    /// <summary>What the chat needs of a WebSocket session: WsSession and WssSession have all of it.</summary>
    public interface IWsMember
    {
        bool SendTextAsync(string text);

        bool Close(int status, string text);
    }

    /// <summary>
    /// For OnWsConnecting: admits an upgrade unless it comes from a web page of another site. A
    /// browser names the page's origin in every WebSocket request; a page that is not this server's
    /// (its Origin is not the Host it asked for) could otherwise join the chat from a visitor's
    /// browser. Programs send no Origin and are admitted. Refused: 403 and the connection stays HTTP.
    /// </summary>
    public static bool Admit(StreamSession session, HttpRequest request)
    {
        if (!request.TryGetHeader("Origin", out var origin))
            return true;
        request.TryGetHeader("Host", out var host);
        if (Uri.TryCreate(origin, UriKind.Absolute, out var page) && string.Equals(page.Authority, host.Trim(), StringComparison.OrdinalIgnoreCase))
            return true;
        Console.WriteLine($"Session {session.Id} refused: a page from {origin} is not this server's ({host})");
        return false;
    }

    /// <summary>For OnWsConnected: greets a member whose upgrade has just been answered.</summary>
    public static void Welcome<TMember>(TMember member)
        where TMember : StreamSession, IWsMember
    {
        Joined(member, member.Socket?.RemoteEndPoint?.ToString());
        member.SendTextAsync(Greeting);
    }

    /// <summary>
    /// For OnWsReceived: passes a member's text message to every member (the sender included) as it
    /// came, and closes the connection of a member who sends "!" once that is passed on. A binary
    /// message is not chat: the member is closed with 1003 (unsupported data).
    /// </summary>
    public static void Relay<TMember>(IWsRoom room, TMember member, WebSocketMessageType type, byte[] buffer, long offset, long size)
        where TMember : StreamSession, IWsMember
    {
        if (type != WebSocketMessageType.Text)
        {
            Console.WriteLine($"Session {member.Id} sent a binary message; the chat takes text only");
            member.Close(WsCloseStatus.UnsupportedData, "The chat takes text messages only");
            return;
        }

        // Text messages arrive checked as UTF-8, so the bytes go out again unchanged: one frame, built once, for every member.
        var message = Encoding.UTF8.GetString(buffer, (int)offset, (int)size);
        Heard(member, message);
        room.MulticastText(buffer, offset, size);
        if (message == ChatProtocol.LeaveCommand)
            member.Close(WsCloseStatus.Normal, "Bye");
    }

    /// <summary>
    /// For OnReceivedRequest: the HTTP requests that are neither an upgrade nor a file of the page.
    /// "/" is sent to the page; anything else is 404. Prints "METHOD target -> status".
    /// </summary>
    public static HttpResponse Answer(HttpRequest request, HttpResponse response)
    {
        const string Page = PagePrefix + "/index.html";
        if (request.TryGetPath(out var path) && path == "/" && request.Method is "GET" or "HEAD")
            response.SetBegin(302).SetHeader("Location", Page).SetHeader("Content-Type", "text/plain; charset=UTF-8").SetBody($"The chat page is at {Page}");
        else
            response.MakeErrorResponse(404, $"Nothing at {request.Url}; the chat page is at {Page}");

        // Printed before the session sends it: once the answer is out, the next request may reuse both objects.
        Console.WriteLine($"{request.Method} {request.Url} -> {response.Status}");
        return response;
    }

    /// <summary>
    /// Runs the operator's console of a WebSocket chat server: prints where the page is once it
    /// listens, announces each line as one text message to every member, and closes every member
    /// with 1001 (going away) before it stops or restarts.
    /// </summary>
    /// <returns>The process exit code.</returns>
    public static Task<int> RunConsoleAsync(IWsRoom room, string title, string scheme) =>
        ServerConsole.RunAsync(title, new ServerConsole.Controls(
            PageFolder.StartShowing(room.Start, () => room.Endpoint, "Chat page", scheme, PagePrefix),
            async () =>
            {
                // A stop drops what is still queued, so the close frames are seen out first: DisconnectAll
                // sends what each connection has queued, ends it and waits (bounded) for the peer to end it too.
                room.CloseAll(WsCloseStatus.GoingAway, GoingAwayReason);
                room.DisconnectAll();
                await room.StopAsync();
            },
            () => room.IsStarted,
            () => room.Endpoint,
            room.MulticastText));
}
