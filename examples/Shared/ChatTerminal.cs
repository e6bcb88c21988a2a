using System;
using System.Buffers;
using System.Net.Sockets;
using System.Net.WebSockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace NetServer.Examples;

/// <summary>
/// The user's side of a chat client: prints what arrives, sends each typed line, and connects
/// again a moment after the connection drops, until the user quits. "!" disconnects (and so
/// reconnects); an empty line (or the end of input) quits. A client forwards its hooks here.
/// Stream clients send lines; ChatTerminal.WebSocket.cs runs WebSocket clients, which send messages.
/// </summary>
internal sealed partial class ChatTerminal : IDisposable
{
    private static readonly TimeSpan s_reconnectPause = TimeSpan.FromSeconds(1);

    private readonly CancellationTokenSource _quitting = new();
    private readonly Decoder _decoder = Encoding.UTF8.GetDecoder();
    private Task _reconnect = Task.CompletedTask;
    private Link _link = null!; // set by RunAsync before the first connect
    private TaskCompletionSource _offline = new(TaskCreationOptions.RunContinuationsAsynchronously);

    /// <summary>Connects <paramref name="client"/>, then sends console lines (each ended by '\n') until the user quits.</summary>
    public Task RunAsync(StreamClient client) =>
        RunAsync(new Link(client, client.ConnectAsync, line => client.SendAsync(line + ChatProtocol.LineEnd), () => client.DisconnectAsync(CancellationToken.None)));

    private async Task RunAsync(Link link)
    {
        _link = link;
        Console.WriteLine($"Connecting to {link.Client.Endpoint}...");
        await TryConnectAsync();
        Console.WriteLine("Type a line to send it, '!' to disconnect (the client reconnects), or an empty line to quit.");

        while (Console.ReadLine() is { Length: > 0 } line)
        {
            if (line == ChatProtocol.LeaveCommand)
                await link.LeaveAsync();
            else if (!link.Send(line))
                Console.WriteLine("Not connected: the line was not sent.");
        }

        // Cancel a pending reconnect (and stop OnDisconnected from starting one) before the last disconnect.
        await _quitting.CancelAsync();
        await Volatile.Read(ref _reconnect);
        await link.LeaveAsync();
        Console.WriteLine("Bye");
    }

    /// <summary>For OnConnected.</summary>
    public void Connected(StreamClient client)
    {
        _decoder.Reset();
        Volatile.Write(ref _offline, new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously));
        Console.WriteLine($"Connected to {client.Endpoint} as {client.Id}");
    }

    /// <summary>For OnReceived: prints the text as it comes (a character split between two receives is kept by the decoder).</summary>
    public void Received(ReadOnlySpan<byte> data)
    {
        var chars = ArrayPool<char>.Shared.Rent(_decoder.GetCharCount(data, flush: false));
        try
        {
            var count = _decoder.GetChars(data, chars, flush: false);
            Console.Out.Write(chars, 0, count);
        }
        finally
        {
            ArrayPool<char>.Shared.Return(chars);
        }
    }

    /// <summary>For OnDisconnected: reports the reason and, unless the user is quitting, schedules a reconnect.</summary>
    public void Disconnected(StreamClient client, DisconnectReason reason)
    {
        Console.WriteLine($"Disconnected ({reason})");
        Volatile.Read(ref _offline).TrySetResult();
        if (!_quitting.IsCancellationRequested)
            Volatile.Write(ref _reconnect, ReconnectLaterAsync());
    }

    /// <summary>For OnError.</summary>
    public static void Error(SocketError error) => Console.WriteLine($"Socket error: {error}");

    public void Dispose() => _quitting.Dispose();

    // Runs from OnDisconnected: the pause is a timer, not a blocked library thread.
    private async Task ReconnectLaterAsync()
    {
        try
        {
            await Task.Delay(s_reconnectPause, _quitting.Token);
        }
        catch (OperationCanceledException)
        {
            return;
        }

        await TryConnectAsync();
    }

    /// <summary>
    /// A failed attempt is reported by OnError (a TLS client's failed handshake by
    /// OnHandshakeFailed, a refused WebSocket upgrade by OnWsError) and ends in OnDisconnected,
    /// which schedules the next one.
    /// </summary>
    private async Task TryConnectAsync()
    {
        try
        {
            await _link.ConnectAsync(_quitting.Token);
        }
        catch (Exception e) when (e is SocketException or OperationCanceledException or WebSocketException or TimeoutException
                                   || _link.Client.DisconnectReason == DisconnectReason.HandshakeFailed)
        {
            // Already on the console through OnError (or OnHandshakeFailed, OnWsError) and OnDisconnected.
        }
    }

    /// <summary>
    /// How the terminal drives its client: connect (a WebSocket client's connect includes the
    /// upgrade), send a typed line, and leave (disconnect, or a WebSocket close handshake),
    /// completing once the connection is over.
    /// </summary>
    private sealed record Link(StreamClient Client, Func<CancellationToken, Task> ConnectAsync, Func<string, bool> Send, Func<Task> LeaveAsync);
}
