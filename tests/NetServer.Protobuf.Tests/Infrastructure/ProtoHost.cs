using System;
using System.IO;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Cryptography.X509Certificates;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Protobuf.Tests.Infrastructure;

public enum TransportKind
{
    Tcp,
    Uds,
    Ssl,
}

/// <summary>Theory data: every stream transport.</summary>
public static class Transports
{
    public static TheoryData<TransportKind> All => new() { TransportKind.Tcp, TransportKind.Uds, TransportKind.Ssl };
}

/// <summary>What a test's server session does with a received envelope (the message is valid only during the call).</summary>
public delegate void EnvelopeHandler(ScriptSession session, in ProtoMessage message);

/// <summary>A server session that runs a test's delegates.</summary>
public sealed class ScriptSession(ProtoServer server, EnvelopeHandler? handler, Action<ScriptSession, DisconnectReason>? disconnected) : ProtoSession(server)
{
    public DisconnectReason? Reason { get; private set; }

    public Exception? DisconnectException { get; private set; }

    protected override void OnMessage(in ProtoMessage message) => handler?.Invoke(this, in message);

    // The session is ready (over TLS: handshaked on the server's side too), so multicasts reach it.
    protected override void OnConnected() => ((ProtoHost)Server).NoteReady();

    protected override void OnDisconnected(DisconnectReason reason)
    {
        DisconnectException = Connection?.DisconnectException;
        Reason = reason;
        base.OnDisconnected(reason);
        disconnected?.Invoke(this, reason);
    }
}

/// <summary>
/// A <see cref="ProtoServer"/> on TCP, a Unix domain socket or TLS, built through the package's
/// public constructors only (loopback port 0, a unique socket path, the in-process test certificates).
/// </summary>
public sealed class ProtoHost : ProtoServer
{
    private readonly EnvelopeHandler? _handler;
    private readonly Action<ScriptSession, DisconnectReason>? _disconnected;

    private ProtoHost(EndPoint endpoint, EnvelopeHandler? handler, Action<ScriptSession, DisconnectReason>? disconnected)
        : base(endpoint)
    {
        _handler = handler;
        _disconnected = disconnected;
    }

    private ProtoHost(SslContext context, EndPoint endpoint, EnvelopeHandler? handler, Action<ScriptSession, DisconnectReason>? disconnected)
        : base(context, endpoint)
    {
        _handler = handler;
        _disconnected = disconnected;
    }

    private int _readySessions;

    public TransportKind Kind { get; private init; }

    /// <summary>
    /// Sessions that became ready (their protocol's OnConnected ran), which multicasts reach. Not
    /// <c>ConnectedSessions</c>: it counts a session from its accept, and over TLS a client's
    /// <c>ConnectAsync</c> returns when the client's side of the handshake is done, while the server
    /// may still be finishing its own (a multicast then misses that session, run in a loop: 5 of 12).
    /// </summary>
    public int ReadySessions => Volatile.Read(ref _readySessions);

    internal void NoteReady() => Interlocked.Increment(ref _readySessions);

    public string? SocketPath { get; private init; }

    /// <summary>A started server of <paramref name="kind"/> whose sessions run <paramref name="handler"/>.</summary>
    public static ProtoHost Start(TransportKind kind, EnvelopeHandler? handler, Action<ScriptSession, DisconnectReason>? disconnected = null)
    {
        var loopback = new IPEndPoint(IPAddress.Loopback, 0);
        var path = Path.Combine(Path.GetTempPath(), $"ns-proto-{Guid.NewGuid():N}.sock");
        var host = kind switch
        {
            TransportKind.Tcp => new ProtoHost(loopback, handler, disconnected) { Kind = kind },
            TransportKind.Ssl => new ProtoHost(TestCertificates.ServerContext(), loopback, handler, disconnected) { Kind = kind },
            _ => new ProtoHost(new UnixDomainSocketEndPoint(path), handler, disconnected) { Kind = kind, SocketPath = path },
        };
        Assert.True(host.Start(), "the server did not start");
        return host;
    }

    /// <summary>A client of this server over its transport (TLS: validating the server against the test CA).</summary>
    public T CreateClient<T>(Func<EndPoint, T> plain, Func<SslContext, EndPoint, T> secure) => Kind switch
    {
        TransportKind.Tcp => plain(Endpoint),
        TransportKind.Ssl => secure(TestCertificates.ClientContext(), Endpoint),
        _ => plain(new UnixDomainSocketEndPoint(SocketPath!)),
    };

    /// <summary>A plain <see cref="ProtoClient"/> of this server, connected.</summary>
    public async Task<ProtoClient> ConnectAsync()
    {
        var client = CreateClient(e => new ProtoClient(e), (c, e) => new ProtoClient(c, e));
        Assert.True(await client.ConnectAsync().WaitAsync(Wait.Default), "the client did not connect");
        return client;
    }

    /// <summary>A raw byte stream to this server (over TLS an <see cref="SslStream"/> that checks the server certificate's issuer).</summary>
    public async Task<Stream> ConnectRawAsync()
    {
        var socket = Kind == TransportKind.Uds
            ? new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified)
            : new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        await socket.ConnectAsync(Kind == TransportKind.Uds ? new UnixDomainSocketEndPoint(SocketPath!) : Endpoint).WaitAsync(Wait.Default);
        var stream = new NetworkStream(socket, ownsSocket: true);
        if (Kind != TransportKind.Ssl)
            return stream;
        var tls = new SslStream(stream);
        await tls.AuthenticateAsClientAsync(new SslClientAuthenticationOptions
        {
            TargetHost = "localhost",
            RemoteCertificateValidationCallback = static (_, certificate, _, _) =>
                certificate is not null && new X509Certificate2(certificate).Issuer == TestCertificates.Authority.Subject,
        }).WaitAsync(Wait.Default);
        return tls;
    }

    protected override ProtoSession CreateProtoSession() => new ScriptSession(this, _handler, _disconnected);

    protected override void Dispose(bool disposing)
    {
        base.Dispose(disposing);
        if (SocketPath is not null)
            File.Delete(SocketPath);
    }
}

/// <summary>Bounded waits, so a broken build fails in seconds instead of hanging.</summary>
public static class Wait
{
    public static readonly TimeSpan Default = TimeSpan.FromSeconds(15);

    public static async Task UntilAsync(Func<bool> condition, Func<string> what, TimeSpan? timeout = null)
    {
        var limit = DateTime.UtcNow + (timeout ?? Default);
        while (!condition())
        {
            if (DateTime.UtcNow > limit)
                Assert.Fail($"Timed out waiting for: {what()}");
            await Task.Delay(5);
        }
    }

    /// <summary>Reads exactly <paramref name="count"/> bytes (bounded).</summary>
    public static async Task<byte[]> ReadExactlyAsync(Stream stream, int count)
    {
        var buffer = new byte[count];
        using var cts = new CancellationTokenSource(Default);
        await stream.ReadExactlyAsync(buffer, cts.Token);
        return buffer;
    }

    /// <summary>Reads until the peer closes (bounded); returns the number of bytes read.</summary>
    public static async Task<int> ReadToEndAsync(Stream stream)
    {
        using var cts = new CancellationTokenSource(Default);
        var buffer = new byte[4096];
        var total = 0;
        try
        {
            int n;
            while ((n = await stream.ReadAsync(buffer, cts.Token)) > 0)
                total += n;
        }
        catch (IOException)
        {
            // A reset is an end too.
        }

        return total;
    }
}
