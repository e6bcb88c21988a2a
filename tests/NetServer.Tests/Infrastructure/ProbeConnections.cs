using System.Net;
using System.Net.Sockets;

namespace NetServer.Tests.Infrastructure;

/// <summary>A TCP session that forwards every hook to its <see cref="Probe"/>.</summary>
public sealed class ProbeTcpSession : TcpSession
{
    public ProbeTcpSession(TcpServer server, Probe probe)
        : base(server)
    {
        Probe = probe;
        AutoJoinMulticast = probe.AutoJoinMulticast;
    }

    public Probe Probe { get; }

    protected override void OnConnecting() => Probe.OnConnecting();

    protected override void OnConnected() => Probe.OnConnected(this);

    protected override void OnDisconnecting() => Probe.OnDisconnecting();

    protected override void OnDisconnected(DisconnectReason reason) => Probe.OnDisconnected(this, reason);

    protected override void OnReceived(byte[] buffer, long offset, long size) => Probe.OnReceived(this, buffer, offset, size);

    protected override void OnSent(long sent, long pending) => Probe.OnSent(this, sent, pending);

    protected override void OnEmpty() => Probe.OnEmpty(this);

    protected override void OnError(SocketError error) => Probe.OnError(this, error);
}

/// <summary>A Unix-socket session that forwards every hook to its <see cref="Probe"/>.</summary>
public sealed class ProbeUdsSession : UdsSession
{
    public ProbeUdsSession(UdsServer server, Probe probe)
        : base(server)
    {
        Probe = probe;
        AutoJoinMulticast = probe.AutoJoinMulticast;
    }

    public Probe Probe { get; }

    protected override void OnConnecting() => Probe.OnConnecting();

    protected override void OnConnected() => Probe.OnConnected(this);

    protected override void OnDisconnecting() => Probe.OnDisconnecting();

    protected override void OnDisconnected(DisconnectReason reason) => Probe.OnDisconnected(this, reason);

    protected override void OnReceived(byte[] buffer, long offset, long size) => Probe.OnReceived(this, buffer, offset, size);

    protected override void OnSent(long sent, long pending) => Probe.OnSent(this, sent, pending);

    protected override void OnEmpty() => Probe.OnEmpty(this);

    protected override void OnError(SocketError error) => Probe.OnError(this, error);
}

/// <summary>A TCP client that forwards every hook to its <see cref="Probe"/>.</summary>
public sealed class ProbeTcpClient(IPEndPoint endpoint, Probe probe) : TcpClient(endpoint)
{
    public Probe Probe { get; } = probe;

    protected override void OnConnecting() => Probe.OnConnecting();

    protected override void OnConnected() => Probe.OnConnected(this);

    protected override void OnDisconnecting() => Probe.OnDisconnecting();

    protected override void OnDisconnected(DisconnectReason reason) => Probe.OnDisconnected(this, reason);

    protected override void OnReceived(byte[] buffer, long offset, long size) => Probe.OnReceived(this, buffer, offset, size);

    protected override void OnSent(long sent, long pending) => Probe.OnSent(this, sent, pending);

    protected override void OnEmpty() => Probe.OnEmpty(this);

    protected override void OnError(SocketError error) => Probe.OnError(this, error);
}

/// <summary>A Unix-socket client that forwards every hook to its <see cref="Probe"/>.</summary>
public sealed class ProbeUdsClient(string path, Probe probe) : UdsClient(path)
{
    public Probe Probe { get; } = probe;

    protected override void OnConnecting() => Probe.OnConnecting();

    protected override void OnConnected() => Probe.OnConnected(this);

    protected override void OnDisconnecting() => Probe.OnDisconnecting();

    protected override void OnDisconnected(DisconnectReason reason) => Probe.OnDisconnected(this, reason);

    protected override void OnReceived(byte[] buffer, long offset, long size) => Probe.OnReceived(this, buffer, offset, size);

    protected override void OnSent(long sent, long pending) => Probe.OnSent(this, sent, pending);

    protected override void OnEmpty() => Probe.OnEmpty(this);

    protected override void OnError(SocketError error) => Probe.OnError(this, error);
}
