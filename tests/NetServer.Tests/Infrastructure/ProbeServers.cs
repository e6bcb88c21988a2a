using System;
using System.Collections.Concurrent;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using Xunit;

namespace NetServer.Tests.Infrastructure;

/// <summary>What the harness needs of a server under test, whatever its session type.</summary>
public interface IProbeServer : IDisposable, IAsyncDisposable
{
    ServerProbe Probe { get; }

    EndPoint Endpoint { get; }

    bool IsStarted { get; }

    long ConnectedSessions { get; }

    long BytesPending { get; }

    long BytesSent { get; }

    long BytesReceived { get; }

    bool Start();

    bool Stop();

    bool Restart();

    Task<bool> StopAsync();

    bool DisconnectAll();

    bool Multicast(byte[] buffer);

    ValueTask<bool> MulticastAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default);

    StreamSession? FindSession(Guid id);

    int OptionMaxSessions { get; set; }

    long RejectedSessions { get; }

    IoService? Service { get; set; }

    bool OptionHooksOnLoop { get; set; }
}

/// <summary>Server-level hook records.</summary>
public sealed class ServerProbe
{
    public ConcurrentQueue<string> Events { get; } = new();

    /// <summary>Every session's probe, by session id (kept after the session disconnects).</summary>
    public ConcurrentDictionary<Guid, Probe> Sessions { get; } = new();

    /// <summary>Called for each new session's probe before the session connects: set its delegates here.</summary>
    public Action<Probe>? ConfigureSession { get; set; }

    public Action<StreamSession>? Connected { get; set; }

    public Action<StreamSession>? Disconnected { get; set; }

    internal Probe NewSessionProbe()
    {
        var probe = new Probe();
        ConfigureSession?.Invoke(probe);
        return probe;
    }

    /// <summary>The sessions are TLS sessions: ready (for multicasts) once OnHandshaked has run, not just OnConnected.</summary>
    public bool Secure { get; set; }

    /// <summary>Waits until <paramref name="count"/> sessions have run OnConnected (over TLS: OnHandshaked).</summary>
    public async Task WaitForSessionsAsync(int count, TimeSpan? timeout = null)
    {
        var limit = DateTime.UtcNow + (timeout ?? TimeSpan.FromSeconds(15));
        while (true)
        {
            var connected = 0;
            foreach (var probe in Sessions.Values)
            {
                if ((Secure ? probe.HandshakedSignal : probe.ConnectedSignal).Task.IsCompleted)
                    connected++;
            }

            if (connected >= count)
                return;
            if (DateTime.UtcNow > limit)
                Assert.Fail($"Only {connected} of {count} sessions connected in time.");
            await Task.Delay(5);
        }
    }
}

public sealed class ProbeTcpServer(IPEndPoint endpoint, ServerProbe probe) : TcpServer(endpoint), IProbeServer
{
    StreamSession? IProbeServer.FindSession(Guid id) => FindSession(id);

    public ServerProbe Probe { get; } = probe;

    protected override TcpSession CreateSession()
    {
        var sessionProbe = Probe.NewSessionProbe();
        var session = new ProbeTcpSession(this, sessionProbe);
        Probe.Sessions[session.Id] = sessionProbe;
        return session;
    }

    protected override void OnConnected(TcpSession session)
    {
        Probe.Events.Enqueue("connected");
        Probe.Connected?.Invoke(session);
    }

    protected override void OnDisconnected(TcpSession session)
    {
        Probe.Events.Enqueue("disconnected");
        Probe.Disconnected?.Invoke(session);
    }

    protected override void OnStarted() => Probe.Events.Enqueue("started");

    protected override void OnStopped() => Probe.Events.Enqueue("stopped");

    protected override void OnError(SocketError error) => Probe.Events.Enqueue("error:" + error);
}

public sealed class ProbeUdsServer(string path, ServerProbe probe) : UdsServer(path), IProbeServer
{
    StreamSession? IProbeServer.FindSession(Guid id) => FindSession(id);

    public ServerProbe Probe { get; } = probe;

    protected override UdsSession CreateSession()
    {
        var sessionProbe = Probe.NewSessionProbe();
        var session = new ProbeUdsSession(this, sessionProbe);
        Probe.Sessions[session.Id] = sessionProbe;
        return session;
    }

    protected override void OnConnected(UdsSession session)
    {
        Probe.Events.Enqueue("connected");
        Probe.Connected?.Invoke(session);
    }

    protected override void OnDisconnected(UdsSession session)
    {
        Probe.Events.Enqueue("disconnected");
        Probe.Disconnected?.Invoke(session);
    }

    protected override void OnStarted() => Probe.Events.Enqueue("started");

    protected override void OnStopped() => Probe.Events.Enqueue("stopped");

    protected override void OnError(SocketError error) => Probe.Events.Enqueue("error:" + error);
}
