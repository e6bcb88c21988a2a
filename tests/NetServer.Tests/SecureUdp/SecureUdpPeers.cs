using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;

namespace NetServer.Tests.SecureUdp;

/// <summary>A secure echo server that records what it got and every error.</summary>
internal sealed class EchoSecureServer : SecureUdpServer
{
    /// <param name="dedicatedThread">The I/O mode.</param>
    /// <param name="askEachDatagram">Receive as NetCoreServer does, one ReceiveAsync() per datagram (from OnStarted, then OnReceived), instead of OptionAutoReceive.</param>
    public EchoSecureServer(bool dedicatedThread, bool askEachDatagram = false)
        : base(new IPEndPoint(IPAddress.Loopback, 0))
    {
        OptionAutoReceive = !askEachDatagram;
        OptionDedicatedThread = dedicatedThread;
    }

    public ConcurrentQueue<(SecureUdpSession Session, EndPoint From, byte[] Data)> Received { get; } = new();

    public ConcurrentQueue<SocketError> Errors { get; } = new();

    public ConcurrentQueue<Exception> Failures { get; } = new();

    public IPEndPoint IPEndpoint => (IPEndPoint)Endpoint;

    protected override void OnStarted()
    {
        if (!OptionAutoReceive)
            ReceiveAsync();
    }

    protected override void OnReceived(SecureUdpSession session, EndPoint endpoint, byte[] buffer, long offset, long size)
    {
        Received.Enqueue((session, endpoint, buffer.AsSpan((int)offset, (int)size).ToArray()));
        SendAsync(session, buffer, offset, size); // the reply path: sealed by session, not by endpoint
        if (!OptionAutoReceive)
            ReceiveAsync();
    }

    protected override void OnError(SocketError error) => Errors.Enqueue(error);

    protected override void OnError(Exception exception) => Failures.Enqueue(exception);
}

/// <summary>A secure client that records what it got and every error.</summary>
internal sealed class RecordingSecureClient : SecureUdpClient
{
    public RecordingSecureClient(IPEndPoint server, SecureUdpSession session, bool dedicatedThread)
        : base(server, session)
    {
        OptionAutoReceive = true;
        OptionDedicatedThread = dedicatedThread;
    }

    public ConcurrentQueue<byte[]> Received { get; } = new();

    public ConcurrentQueue<SocketError> Errors { get; } = new();

    public ConcurrentQueue<Exception> Failures { get; } = new();

    public IPEndPoint LocalEndpoint => (IPEndPoint)Socket!.LocalEndPoint!;

    protected override void OnReceived(EndPoint endpoint, ReadOnlySpan<byte> buffer) => Received.Enqueue(buffer.ToArray());

    protected override void OnError(SocketError error) => Errors.Enqueue(error);

    protected override void OnError(Exception exception) => Failures.Enqueue(exception);
}

/// <summary>
/// A man in the middle on loopback: the client talks to <see cref="Endpoint"/>, which forwards to
/// the server (through <see cref="ToServer"/>, which may change or drop a datagram) and back to the
/// last client endpoint; it keeps a copy of every datagram it saw, to replay them later.
/// </summary>
internal sealed class UdpWire : IAsyncDisposable
{
    private readonly Socket _socket = new(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
    private readonly IPEndPoint _server;
    private readonly CancellationTokenSource _stop = new();
    private readonly Task _loop;
    private EndPoint? _client;

    public UdpWire(IPEndPoint server)
    {
        _server = server;
        _socket.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        Endpoint = (IPEndPoint)_socket.LocalEndPoint!;
        _loop = Task.Run(ForwardAsync);
    }

    public IPEndPoint Endpoint { get; }

    /// <summary>Changes a datagram on its way to the server (null drops it); the default passes it on.</summary>
    public Func<byte[], byte[]?> ToServer { get; set; } = d => d;

    public ConcurrentQueue<byte[]> CapturedToServer { get; } = new();

    public ConcurrentQueue<byte[]> CapturedToClient { get; } = new();

    /// <summary>Sends again, from the wire's own endpoint, datagrams it captured.</summary>
    public void Replay(IEnumerable<byte[]> datagrams, bool toServer)
    {
        foreach (var datagram in datagrams)
            _socket.SendTo(datagram, toServer ? _server : _client!);
    }

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync();
        _socket.Dispose();
        await _loop.WaitAsync(Wait.Default); // the loop ends with the socket
        _stop.Dispose();
    }

    private async Task ForwardAsync()
    {
        var buffer = new byte[UdpPeer.MaxDatagramPayload];
        while (!_stop.IsCancellationRequested)
        {
            SocketReceiveFromResult result;
            try
            {
                result = await _socket.ReceiveFromAsync(buffer, SocketFlags.None, new IPEndPoint(IPAddress.Any, 0), _stop.Token);
            }
            catch (Exception e) when (e is OperationCanceledException or ObjectDisposedException or SocketException)
            {
                if (_stop.IsCancellationRequested)
                    return;
                continue;
            }

            var datagram = buffer.AsSpan(0, result.ReceivedBytes).ToArray();
            if (result.RemoteEndPoint.Equals(_server))
            {
                CapturedToClient.Enqueue(datagram);
                if (_client is not null)
                    _socket.SendTo(datagram, _client);
                continue;
            }

            _client = result.RemoteEndPoint;
            CapturedToServer.Enqueue(datagram);
            if (ToServer(datagram) is { } forwarded)
                _socket.SendTo(forwarded, _server);
        }
    }
}
