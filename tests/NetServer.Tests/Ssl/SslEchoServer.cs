using System;
using System.Collections.Concurrent;
using System.IO;
using System.Linq;
using System.Net;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Ssl;

/// <summary>
/// An <see cref="SslServer"/> under test on 127.0.0.1 port 0 whose sessions echo what they receive
/// and record their hooks (the TLS ones included), with a leak-checking buffer pool. Disposing it
/// stops the server and checks that every pooled buffer came back. (The OpenSSL interop tests use it too.)
/// </summary>
internal sealed class SslEchoServer : IAsyncDisposable
{
    private readonly ConcurrentQueue<(SslSession Session, Probe Probe)> _sessions = new();
    private int _round;

    /// <param name="context">The server's TLS settings.</param>
    /// <param name="configure">Sets a new session's probe delegates after the echo (which it may replace).</param>
    public SslEchoServer(SslContext context, Action<Probe>? configure = null)
    {
        Probe.ConfigureSession = probe =>
        {
            probe.RecordHandshakes = true;
            probe.Received = (session, buffer, offset, size) => session.SendAsync(buffer, offset, size);
            configure?.Invoke(probe);
        };
        Probe.Connected = session => _sessions.Enqueue(((SslSession)session, Probe.Sessions[session.Id]));
        Server = new ProbeSslServer(context, new IPEndPoint(IPAddress.Loopback, 0), Probe) { BufferPool = Pool };
        Assert.True(Server.Start());
    }

    public ServerProbe Probe { get; } = new();

    public ProbeSslServer Server { get; }

    public IPEndPoint Endpoint => (IPEndPoint)Server.Endpoint;

    internal LeakCheckingBufferPool Pool { get; } = new();

    /// <summary>A client of this server (not yet connected) with the leak-checking pool.</summary>
    public ProbeSslClient CreateClient(SslContext context, Probe probe) => new(context, Endpoint, probe) { BufferPool = Pool };

    /// <summary>The <paramref name="index"/>th session to run OnConnected (bounded wait).</summary>
    public async Task<(StreamSession Session, Probe Probe)> SessionAsync(int index)
    {
        await Wait.UntilAsync(() => _sessions.Count > index, $"session #{index} to connect");
        return _sessions.ElementAt(index);
    }

    /// <summary>
    /// A good client connects with <paramref name="context"/>, handshakes, gets its bytes echoed
    /// and disconnects; returns what each side negotiated.
    /// </summary>
    public async Task<(TlsInfo Client, TlsInfo Session)> AssertServesAsync(SslContext context, string? targetHost = null)
    {
        var round = Interlocked.Increment(ref _round);
        var probe = new Probe();
        var received = new MemoryStream();
        probe.Received = (_, buffer, offset, size) =>
        {
            lock (received)
                received.Write(buffer, (int)offset, (int)size);
        };

        using var client = CreateClient(context, probe);
        if (targetHost is not null)
            client.TargetHost = targetHost;
        var known = _sessions.Count;
        Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(Wait.Default), "A good client could not connect.");
        Assert.True(client.IsHandshaked, "A good client's handshake did not succeed.");

        var data = Framing.Pattern(round * 10_000, 5000);
        Assert.True(client.SendAsync(data));
        // The probe counts the bytes before its Received callback copies them: wait for the copy.
        await Wait.UntilAsync(
            () =>
            {
                lock (received)
                    return received.Length >= data.Length;
            },
            "the good client's bytes to be echoed");
        lock (received)
            Assert.Equal(data, received.ToArray());

        // The session that served it: the newest one, still connected.
        await Wait.UntilAsync(() => _sessions.Count > known, "the good client's session");
        var session = _sessions.ElementAt(known).Session;
        var sessionTls = session.Tls ?? throw new InvalidOperationException("The session serving a handshaked client has no TlsInfo.");
        var clientTls = client.Tls!;

        Assert.True(client.Disconnect());
        Assert.Equal(DisconnectReason.LocalDisconnect, await probe.DisconnectedSignal.Task.WaitAsync(Wait.Default));
        Assert.Null(client.DisconnectException);
        return (clientTls, sessionTls);
    }

    public async ValueTask DisposeAsync()
    {
        if (Server.IsStarted)
            await Server.StopAsync().WaitAsync(Wait.Default);
        Server.Dispose();
        await Pool.AssertAllReturnedAsync();
    }
}
