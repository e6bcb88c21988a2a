using System;
using System.Collections.Concurrent;
using System.IO;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace NetServer.Tests.Infrastructure;

/// <summary>
/// A stand-in web server for the page tests until NetServer's own HttpServer serves static files:
/// GET and HEAD of the files under one folder, on 127.0.0.1 port 0, one request per connection
/// (every answer says Connection: close). It serves nothing outside the folder.
/// </summary>
internal sealed class StaticFileServer : IDisposable
{
    private const int MaxHeadBytes = 16 * 1024;
    private static readonly TimeSpan s_requestTimeout = TimeSpan.FromSeconds(10);

    private readonly Socket _listener = new(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
    private readonly string _root;

    public StaticFileServer(string root)
    {
        _root = Path.GetFullPath(root) + Path.DirectorySeparatorChar;
        _listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        _listener.Listen(64);
        Address = new Uri($"http://127.0.0.1:{((IPEndPoint)_listener.LocalEndPoint!).Port}/");
        _ = AcceptAsync();
    }

    /// <summary>The root of the served folder, e.g. http://127.0.0.1:PORT/.</summary>
    public Uri Address { get; }

    /// <summary>Every request answered, as "METHOD /path STATUS", in the order answered.</summary>
    public ConcurrentQueue<string> Served { get; } = new();

    public void Dispose() => _listener.Dispose();

    private async Task AcceptAsync()
    {
        try
        {
            while (true)
                _ = ServeAsync(await _listener.AcceptAsync());
        }
        catch (Exception e) when (e is SocketException or ObjectDisposedException)
        {
            // Disposed: the server is done.
        }
    }

    private async Task ServeAsync(Socket socket)
    {
        using var _ = socket;
        using var timeout = new CancellationTokenSource(s_requestTimeout);
        try
        {
            var head = await ReadHeadAsync(socket, timeout.Token);
            var parts = head?.Split(' ', 3);
            if (parts is not [var method, var target, _] || (method != "GET" && method != "HEAD"))
            {
                await AnswerAsync(socket, head, 400, "text/plain", Encoding.ASCII.GetBytes("GET or HEAD only\n"), false, timeout.Token);
                return;
            }

            var file = Locate(target);
            if (file is null)
                await AnswerAsync(socket, head, 404, "text/plain", Encoding.ASCII.GetBytes("Not found\n"), false, timeout.Token);
            else
                await AnswerAsync(socket, head, 200, ContentType(file), await File.ReadAllBytesAsync(file, timeout.Token), method == "HEAD", timeout.Token);
        }
        catch (Exception e) when (e is SocketException or IOException or OperationCanceledException)
        {
            // The browser closed the connection or never finished its request: nothing to answer.
        }
    }

    /// <summary>The request line, after reading the whole head; null when the head is too long or never ends.</summary>
    private static async Task<string?> ReadHeadAsync(Socket socket, CancellationToken cancellationToken)
    {
        var buffer = new byte[MaxHeadBytes];
        var length = 0;
        while (length < buffer.Length)
        {
            var read = await socket.ReceiveAsync(buffer.AsMemory(length), SocketFlags.None, cancellationToken);
            if (read == 0)
                return null;
            length += read;
            var text = Encoding.Latin1.GetString(buffer, 0, length);
            if (text.Contains("\r\n\r\n", StringComparison.Ordinal))
                return text[..text.IndexOf("\r\n", StringComparison.Ordinal)];
        }

        return null;
    }

    /// <summary>The file a request target names, or null when there is none inside the root.</summary>
    private string? Locate(string target)
    {
        var path = Uri.UnescapeDataString(target.Split('?', 2)[0]).TrimStart('/');
        var full = Path.GetFullPath(Path.Combine(_root, path));
        if (!(full + Path.DirectorySeparatorChar).StartsWith(_root, StringComparison.Ordinal))
            return null;
        if (Directory.Exists(full))
            full = Path.Combine(full, "index.html");
        return File.Exists(full) ? full : null;
    }

    private async Task AnswerAsync(Socket socket, string? requestLine, int status, string contentType, byte[] body, bool headOnly, CancellationToken cancellationToken)
    {
        var reason = status switch { 200 => "OK", 404 => "Not Found", _ => "Bad Request" };
        var head = Encoding.ASCII.GetBytes(
            $"HTTP/1.1 {status} {reason}\r\nContent-Type: {contentType}\r\nContent-Length: {body.Length}\r\nConnection: close\r\n\r\n");
        await socket.SendAsync(head, SocketFlags.None, cancellationToken);
        if (!headOnly)
            await socket.SendAsync(body, SocketFlags.None, cancellationToken);
        socket.Shutdown(SocketShutdown.Send);
        var parts = requestLine?.Split(' ');
        Served.Enqueue(parts is [var method, var target, ..] ? $"{method} {target} {status}" : $"? ? {status}");
    }

    private static string ContentType(string file) => Path.GetExtension(file) switch
    {
        ".html" => "text/html; charset=utf-8",
        ".js" => "text/javascript; charset=utf-8",
        ".css" => "text/css; charset=utf-8",
        ".yaml" => "application/yaml; charset=utf-8",
        ".json" => "application/json; charset=utf-8",
        ".png" => "image/png",
        _ => "application/octet-stream",
    };
}
