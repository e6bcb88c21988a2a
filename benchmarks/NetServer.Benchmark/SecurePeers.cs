using System;
using System.Net;
using System.Net.Sockets;
using System.Text;

namespace NetServer.Benchmark;

/// <summary>The sudp echo server: <see cref="BenchUdpServer"/>'s echo on a SecureUdpServer (each datagram opened, then sealed back).</summary>
internal sealed class BenchSecureUdpServer(IPEndPoint endpoint, ServerCounters counters) : SecureUdpServer(endpoint)
{
    protected override void OnReceived(EndPoint endpoint, byte[] buffer, long offset, long size) => SendAsync(endpoint, buffer, offset, size);

    protected override void OnError(SocketError error) => BenchUdpServer.Count(counters, error);
}

/// <summary>The sudp client: <see cref="BenchUdpClient"/> on a SecureUdpClient, with the same <see cref="DatagramBehavior"/>.</summary>
internal sealed class BenchSecureUdpClient(IPEndPoint endpoint, SecureUdpSession session, DatagramBehavior behavior) : SecureUdpClient(endpoint, session)
{
    protected override void OnConnected() => behavior.Connected(this);

    protected override void OnReceived(EndPoint endpoint, byte[] buffer, long offset, long size) => behavior.Received(this, buffer, offset, size);

    protected override void OnError(SocketError error) => behavior.Error(error);
}

/// <summary>
/// The sudp run's sessions, one per client, from one secret (random per run, or --key when server
/// and clients are separate processes): client i receives on index i + 1, the server's session for
/// it on 0x80000000 + i, and each pair's keys are bound to a context naming the client.
/// </summary>
internal sealed class BenchKeys(byte[] secret)
{
    private const uint ServerIndexBase = 0x8000_0000;

    public static BenchKeys Create(string? hex) => new(hex is null ? SecureUdpSession.NewSecret() : Convert.FromHexString(hex));

    public SecureUdpSession Server(int client) =>
        new(secret, Context(client), SecureUdpRole.Responder, ServerIndexBase + (uint)client, (uint)client + 1);

    public SecureUdpSession Client(int client) =>
        new(secret, Context(client), SecureUdpRole.Initiator, (uint)client + 1, ServerIndexBase + (uint)client);

    private static byte[] Context(int client) => Encoding.ASCII.GetBytes($"netserver-bench sudp client {client}");
}
