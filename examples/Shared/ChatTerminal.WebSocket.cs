using System;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace NetServer.Examples;

/// <summary>
/// The chat terminal of a WebSocket client (WsChatClient, WssChatClient): each typed line goes out
/// as one text message and each message that arrives is printed as one line. "!" and quitting
/// close the WebSocket with 1000 and wait for the server's answer and its end of the connection.
/// </summary>
internal sealed partial class ChatTerminal
{
    // Longer than the close handshake's own bound (WsOptions.CloseTimeout, twice: the server's answer, then its end of the connection).
    private static readonly TimeSpan s_closeWait = TimeSpan.FromSeconds(15);

    /// <summary>Connects (and upgrades) <paramref name="client"/>, then sends console lines as text messages until the user quits.</summary>
    public Task RunAsync(WsClient client) =>
        RunAsync(new Link(client, client.ConnectAsync, client.SendTextAsync, () => LeaveAsync(client, client.Close)));

    /// <inheritdoc cref="RunAsync(WsClient)"/>
    public Task RunAsync(WssClient client) =>
        RunAsync(new Link(client, client.ConnectAsync, client.SendTextAsync, () => LeaveAsync(client, client.Close)));

    /// <summary>For OnWsReceived: prints one text message as one line.</summary>
    public static void ReceivedMessage(ReadOnlySpan<byte> text) => Console.WriteLine(Encoding.UTF8.GetString(text));

    /// <summary>For OnWsClose: the close frame that ends the WebSocket, the server's own or its answer to ours.</summary>
    public static void Closed(int status, ReadOnlySpan<byte> reason) =>
        Console.WriteLine(reason.IsEmpty ? $"Closed: {status}" : $"Closed: {status} {Encoding.UTF8.GetString(reason)}");

    /// <summary>For OnWsError: the server broke the protocol or refused the upgrade.</summary>
    public static void WebSocketError(string error) => Console.WriteLine($"WebSocket error: {error}");

    /// <summary>
    /// Starts the close handshake and waits until OnDisconnected has run (the library bounds the
    /// handshake); a connection that is not (yet) a WebSocket is simply disconnected.
    /// </summary>
    private async Task LeaveAsync(StreamClient client, Func<int, bool> close)
    {
        var offline = Volatile.Read(ref _offline).Task;
        if (close(WsCloseStatus.Normal))
        {
            try
            {
                await offline.WaitAsync(s_closeWait);
            }
            catch (TimeoutException)
            {
                Console.WriteLine($"No end of the close handshake within {s_closeWait.TotalSeconds} s.");
            }
        }

        await client.DisconnectAsync(CancellationToken.None);
    }
}
