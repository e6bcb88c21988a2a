using System;
using System.Buffers;
using System.Net.Sockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace NetServer.Examples;

/// <summary>
/// The user's side of a chat client: prints what arrives, sends each typed line, and connects
/// again a moment after the connection drops, until the user quits. "!" disconnects (and so
/// reconnects); an empty line (or the end of input) quits. A client forwards its hooks here.
/// </summary>
internal sealed class ChatTerminal : IDisposable
{
    private static readonly TimeSpan s_reconnectPause = TimeSpan.FromSeconds(1);

    private readonly CancellationTokenSource _quitting = new();
    private readonly Decoder _decoder = Encoding.UTF8.GetDecoder();
    private Task _reconnect = Task.CompletedTask;

    /// <summary>Connects <paramref name="client"/>, then sends console lines until the user quits.</summary>
    public async Task RunAsync(StreamClient client)
    {
        Console.WriteLine($"Connecting to {client.Endpoint}...");
        await TryConnectAsync(client);
        Console.WriteLine("Type a line to send it, '!' to disconnect (the client reconnects), or an empty line to quit.");

        while (Console.ReadLine() is { Length: > 0 } line)
        {
            if (line == ChatProtocol.LeaveCommand)
                await client.DisconnectAsync(CancellationToken.None);
            else if (!client.SendAsync(line + ChatProtocol.LineEnd))
                Console.WriteLine("Not connected: the line was not sent.");
        }

        // Cancel a pending reconnect (and stop OnDisconnected from starting one) before the last disconnect.
        await _quitting.CancelAsync();
        await Volatile.Read(ref _reconnect);
        await client.DisconnectAsync(CancellationToken.None);
        Console.WriteLine("Bye");
    }

    /// <summary>For OnConnected.</summary>
    public void Connected(StreamClient client)
    {
        _decoder.Reset();
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
        if (!_quitting.IsCancellationRequested)
            Volatile.Write(ref _reconnect, ReconnectLaterAsync(client));
    }

    /// <summary>For OnError.</summary>
    public static void Error(SocketError error) => Console.WriteLine($"Socket error: {error}");

    public void Dispose() => _quitting.Dispose();

    // Runs from OnDisconnected: the pause is a timer, not a blocked library thread.
    private async Task ReconnectLaterAsync(StreamClient client)
    {
        try
        {
            await Task.Delay(s_reconnectPause, _quitting.Token);
        }
        catch (OperationCanceledException)
        {
            return;
        }

        await TryConnectAsync(client);
    }

    /// <summary>
    /// A failed attempt is reported by OnError (a TLS client's failed handshake by
    /// OnHandshakeFailed) and ends in OnDisconnected, which schedules the next one.
    /// </summary>
    private async Task TryConnectAsync(StreamClient client)
    {
        try
        {
            await client.ConnectAsync(_quitting.Token);
        }
        catch (Exception e) when (e is SocketException or OperationCanceledException || client.DisconnectReason == DisconnectReason.HandshakeFailed)
        {
            // Already on the console through OnError (or OnHandshakeFailed) and OnDisconnected.
        }
    }
}
