using System;
using System.Collections.Concurrent;
using System.Linq;
using System.Net;
using System.Net.Http;
using System.Net.Sockets;
using System.Net.WebSockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;

namespace NetServer.Redis.Tests.ScaleOut;

/// <summary>
/// A chat member of the test: a <see cref="ClientWebSocket"/> through HAProxy that keeps every text
/// message it receives, and knows its own address (what a node should name it by, from the PROXY header).
/// </summary>
internal sealed class ChatClient : IAsyncDisposable
{
    private readonly ClientWebSocket _socket = new();
    private readonly ConcurrentQueue<string> _received = new();
    private readonly CancellationTokenSource _stop = new();
    private Task _receiving = Task.CompletedTask;

    /// <summary>The client's end of its TCP connection to HAProxy.</summary>
    public IPEndPoint LocalEndPoint { get; private set; } = null!;

    /// <summary>The node it landed on and its session id there, from the welcome message.</summary>
    public string Node { get; private set; } = "";

    public Guid Session { get; private set; }

    public string[] Received => _received.ToArray();

    public static async Task<ChatClient> ConnectAsync(IPEndPoint proxy)
    {
        var client = new ChatClient();
        var handler = new SocketsHttpHandler
        {
            ConnectCallback = async (context, token) =>
            {
                var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
                await socket.ConnectAsync(context.DnsEndPoint, token);
                client.LocalEndPoint = (IPEndPoint)socket.LocalEndPoint!;
                return new NetworkStream(socket, ownsSocket: true);
            },
        };
        using var timeout = new CancellationTokenSource(Wait.Default);
        await client._socket.ConnectAsync(new Uri($"ws://{proxy}/"), new HttpMessageInvoker(handler), timeout.Token);
        client._receiving = client.ReceiveAllAsync();

        // "welcome node=NAME session=ID room=lobby"
        var welcome = (await client.WaitForAsync(m => m.StartsWith("welcome ", StringComparison.Ordinal), "the welcome")).Split(' ');
        client.Node = welcome[1]["node=".Length..];
        client.Session = Guid.Parse(welcome[2]["session=".Length..]);
        return client;
    }

    public async Task SayAsync(string text)
    {
        using var timeout = new CancellationTokenSource(Wait.Default);
        await _socket.SendAsync(Encoding.UTF8.GetBytes(text), WebSocketMessageType.Text, endOfMessage: true, timeout.Token);
    }

    /// <summary>The first message received (now or within <paramref name="timeout"/>) that <paramref name="match"/> accepts.</summary>
    public async Task<string> WaitForAsync(Func<string, bool> match, string what, TimeSpan? timeout = null, int skip = 0)
    {
        string? found = null;
        await Wait.UntilAsync(() => (found = _received.Skip(skip).FirstOrDefault(match)) is not null,
            () => $"{what} at the client on {Node} ({LocalEndPoint}); it got:{Environment.NewLine}{string.Join(Environment.NewLine, _received)}", timeout);
        return found!;
    }

    public Task<string> WaitForAsync(string message, TimeSpan? timeout = null) => WaitForAsync(m => m == message, $"\"{message}\"", timeout);

    /// <summary>The room's members on every live node, as the node reads them from Redis ("/who").</summary>
    public async Task<Guid[]> WhoAsync()
    {
        var before = _received.Count;
        await SayAsync("/who");
        var answer = await WaitForAsync(m => m.StartsWith("who ", StringComparison.Ordinal), "the answer to /who", skip: before);
        return answer[(answer.IndexOf(':', StringComparison.Ordinal) + 1)..]
            .Split(' ', StringSplitOptions.RemoveEmptyEntries).Select(Guid.Parse).ToArray();
    }

    private async Task ReceiveAllAsync()
    {
        var buffer = new byte[16 * 1024];
        var message = new System.IO.MemoryStream();
        try
        {
            while (true)
            {
                var result = await _socket.ReceiveAsync(buffer, _stop.Token);
                if (result.MessageType == WebSocketMessageType.Close)
                    return;
                message.Write(buffer, 0, result.Count);
                if (result.EndOfMessage)
                {
                    _received.Enqueue(Encoding.UTF8.GetString(message.GetBuffer(), 0, (int)message.Length));
                    message.SetLength(0);
                }
            }
        }
        catch (Exception e) when (e is WebSocketException or OperationCanceledException)
        {
            // The node went away or the test is done: what came is in _received.
        }
    }

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync();
        await _receiving.WaitAsync(Wait.Default);
        _socket.Dispose();
        _stop.Dispose();
    }
}
