using System;
using System.Collections.Concurrent;
using System.Net;
using System.Net.Sockets;
using System.Threading.Tasks;

namespace NetServer.Tests.Infrastructure;

/// <summary>
/// A TCP listener on 127.0.0.1 port 0 that accepts connections and never says a word: a TLS
/// client's hello goes unanswered. Disposing it closes every connection.
/// </summary>
internal sealed class SilentListener : IDisposable
{
    private readonly Socket _listener = new(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
    private readonly ConcurrentQueue<Socket> _accepted = new();

    public SilentListener()
    {
        _listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        _listener.Listen(16);
        Endpoint = (IPEndPoint)_listener.LocalEndPoint!;
        _ = AcceptAsync();
    }

    public IPEndPoint Endpoint { get; }

    /// <summary>Connections accepted so far.</summary>
    public int Accepted => _accepted.Count;

    public void Dispose()
    {
        _listener.Dispose();
        while (_accepted.TryDequeue(out var socket))
            socket.Dispose();
    }

    private async Task AcceptAsync()
    {
        try
        {
            while (true)
                _accepted.Enqueue(await _listener.AcceptAsync());
        }
        catch (Exception e) when (e is SocketException or ObjectDisposedException)
        {
            // Disposed: the listener is done.
        }
    }
}
