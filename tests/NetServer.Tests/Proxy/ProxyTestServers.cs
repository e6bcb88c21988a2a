using System;
using System.Collections.Concurrent;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Threading.Tasks;
using NetServer.Diagnostics;
using NetServer.Tests.Infrastructure;

namespace NetServer.Tests.Proxy;

/// <summary>What a session behind a PROXY header saw: its address at its first hook, and how it ended.</summary>
internal sealed class ProxySeen
{
    private readonly TaskCompletionSource<(EndPoint? Remote, ProxyInfo? Proxy)> _first = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly TaskCompletionSource<(DisconnectReason Reason, Exception? Exception)> _ended = new(TaskCreationOptions.RunContinuationsAsynchronously);

    public volatile bool Connected;

    /// <summary>RemoteEndPoint and Proxy as OnConnecting (the first hook) saw them.</summary>
    public Task<(EndPoint? Remote, ProxyInfo? Proxy)> First => _first.Task.WaitAsync(Wait.Default);

    public Task<(DisconnectReason Reason, Exception? Exception)> Ended => _ended.Task.WaitAsync(Wait.Default);

    public void Connecting(StreamSession session) => _first.TrySetResult((session.RemoteEndPoint, session.Proxy));

    public void Disconnected(StreamSession session, DisconnectReason reason) => _ended.TrySetResult((reason, session.DisconnectException));
}

/// <summary>Collects the listener's ProtocolError events.</summary>
internal sealed class ProtocolErrors : NetServerEventListener
{
    public readonly ConcurrentQueue<(string Protocol, string Error, EndPoint? Remote)> Events = new();

    public override void ProtocolError(object source, Guid id, EndPoint? remote, string protocol, string error) =>
        Events.Enqueue((protocol, error, remote));
}

internal sealed class ProxyTcpSession(TcpServer server, ProxySeen seen) : TcpSession(server)
{
    protected override void OnConnecting() => seen.Connecting(this);

    protected override void OnConnected() => seen.Connected = true;

    protected override void OnReceived(byte[] buffer, long offset, long size) => SendAsync(buffer, offset, size);

    protected override void OnDisconnected(DisconnectReason reason) => seen.Disconnected(this, reason);
}

/// <summary>A TCP echo server whose sessions report to one <see cref="ProxySeen"/> per connection, in order.</summary>
internal sealed class ProxyTcpServer(IPEndPoint endpoint) : TcpServer(endpoint)
{
    public readonly SessionLog Seen = new();

    protected override TcpSession CreateSession() => new ProxyTcpSession(this, Seen.Next());
}

internal sealed class ProxyUdsSession(UdsServer server, ProxySeen seen) : UdsSession(server)
{
    protected override void OnConnecting() => seen.Connecting(this);

    protected override void OnConnected() => seen.Connected = true;

    protected override void OnReceived(byte[] buffer, long offset, long size) => SendAsync(buffer, offset, size);

    protected override void OnDisconnected(DisconnectReason reason) => seen.Disconnected(this, reason);
}

internal sealed class ProxyUdsServer(string path) : UdsServer(path)
{
    public readonly SessionLog Seen = new();

    protected override UdsSession CreateSession() => new ProxyUdsSession(this, Seen.Next());
}

/// <summary>An HTTP server that answers every request with the client address its session sees.</summary>
internal sealed class ProxyHttpServer(IPEndPoint endpoint) : HttpServer(endpoint)
{
    private sealed class Session(HttpServer server) : HttpSession(server)
    {
        protected override void OnReceivedRequest(HttpRequest request) =>
            SendResponseAsync(Response.MakeGetResponse($"{RemoteEndPoint} v{Proxy?.Version}"));
    }

    protected override TcpSession CreateSession() => new Session(this);
}

/// <summary>A WebSocket server whose sessions report the client address they see once upgraded.</summary>
internal sealed class ProxyWsServer(IPEndPoint endpoint) : WsServer(endpoint)
{
    public readonly SessionLog Seen = new();

    private sealed class Session(WsServer server, ProxySeen seen) : WsSession(server)
    {
        protected override void OnConnecting() => seen.Connecting(this);

        public override void OnWsConnected(HttpRequest request) => seen.Connected = true;
    }

    protected override TcpSession CreateSession() => new Session(this, Seen.Next());
}

/// <summary>The <see cref="ProxySeen"/> of each session, in the order the server created them.</summary>
internal sealed class SessionLog
{
    private readonly ConcurrentQueue<ProxySeen> _all = new();
    private int _taken;

    public ProxySeen Next()
    {
        var seen = new ProxySeen();
        _all.Enqueue(seen);
        return seen;
    }

    /// <summary>The next session's record, waiting for the server to create it.</summary>
    public async Task<ProxySeen> TakeAsync()
    {
        var index = _taken++;
        await Wait.UntilAsync(() => _all.Count > index, "the server to create a session");
        return _all.ElementAt(index);
    }

    /// <summary>The record of the session whose first hook saw <paramref name="remote"/> (other connections, such as a readiness probe's, are passed over).</summary>
    public async Task<ProxySeen> ForRemoteAsync(EndPoint remote)
    {
        ProxySeen? found = null;
        await Wait.UntilAsync(
            () => (found = _all.FirstOrDefault(s => s.First.IsCompletedSuccessfully && Equals(s.First.Result.Remote, remote))) is not null,
            $"a session for {remote}");
        return found!;
    }
}

/// <summary>PROXY headers written by hand.</summary>
internal static class ProxyHeaders
{
    private static readonly byte[] s_signature = { 0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A };

    public static byte[] V1(string source, int sourcePort, string destination, int destinationPort) =>
        Encoding.ASCII.GetBytes($"PROXY TCP4 {source} {destination} {sourcePort} {destinationPort}\r\n");

    /// <summary>A v2 PROXY TCP over IPv4 header with the given TLVs (type, text value).</summary>
    public static byte[] V2(IPEndPoint source, IPEndPoint destination, params (byte Type, string Value)[] tlvs)
    {
        var body = source.Address.GetAddressBytes()
            .Concat(destination.Address.GetAddressBytes())
            .Concat(new[] { (byte)(source.Port >> 8), (byte)source.Port, (byte)(destination.Port >> 8), (byte)destination.Port })
            .Concat(tlvs.SelectMany(t =>
            {
                var value = Encoding.UTF8.GetBytes(t.Value);
                return new[] { t.Type, (byte)(value.Length >> 8), (byte)value.Length }.Concat(value);
            }))
            .ToArray();
        return s_signature.Concat(new byte[] { 0x21, 0x11, (byte)(body.Length >> 8), (byte)body.Length }).Concat(body).ToArray();
    }

    public static async Task<Socket> ConnectAsync(EndPoint endpoint)
    {
        var socket = endpoint is IPEndPoint ip
            ? new Socket(ip.AddressFamily, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true }
            : new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified);
        await socket.ConnectAsync(endpoint).WaitAsync(Wait.Default);
        return socket;
    }

    /// <summary>Reads until the peer closes (or resets); returns what came.</summary>
    public static async Task<byte[]> ReadToEndAsync(Socket socket)
    {
        var all = new System.IO.MemoryStream();
        var buffer = new byte[4096];
        try
        {
            int read;
            while ((read = await socket.ReceiveAsync(buffer, SocketFlags.None).WaitAsync(Wait.Default)) > 0)
                all.Write(buffer, 0, read);
        }
        catch (SocketException)
        {
            // A reset ends the stream too.
        }

        return all.ToArray();
    }
}
