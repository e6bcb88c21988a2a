using System;
using System.Collections.Generic;
using System.Linq;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Ssl;

/// <summary>
/// A peer that ends a TLS connection the way NetCoreServer's SslClient does: close_notify
/// (<see cref="SslStream.ShutdownAsync"/>), then its socket shut down both ways and closed at once,
/// without waiting for our close_notify or reading what we sent. That is an ordinary close: the
/// session ends with <see cref="DisconnectReason.PeerClosed"/> and no OnError, also when bytes of
/// ours cross the peer's close (its kernel then answers them with a reset, which our write may see
/// before our receive loop has read the close_notify that came ahead of it).
/// </summary>
public class TlsPeerCloseTests
{
    private const int Connections = 50;

    /// <summary>What the server sends while the peer closes.</summary>
    public enum ServerTalk
    {
        /// <summary>Nothing (it answers only the peer's close).</summary>
        Nothing,

        /// <summary>A greeting once the handshake is done, which the peer never reads.</summary>
        UnreadGreeting,

        /// <summary>Data all the time (each time its queue empties).</summary>
        Streaming,
    }

    [Theory]
    [InlineData(ServerTalk.Nothing)]
    [InlineData(ServerTalk.UnreadGreeting)]
    [InlineData(ServerTalk.Streaming)]
    public async Task A_peer_that_sends_close_notify_and_closes_its_socket_at_once_ends_the_session_as_PeerClosed_without_OnError(ServerTalk talk)
    {
        var chunk = new byte[20_000];
        await using var bench = new SslEchoServer(TestCertificates.ServerContext(), probe =>
        {
            if (talk == ServerTalk.UnreadGreeting)
                probe.Handshaked = session => session.SendAsync(new byte[300]);
            else if (talk == ServerTalk.Streaming)
                probe.Empty = session => session.SendAsync(chunk);
        });

        for (var i = 0; i < Connections; i++)
            await ConnectAndCloseLikeNetCoreServerAsync(bench.Endpoint);

        var unclean = new List<string>();
        var errors = 0;
        for (var i = 0; i < Connections; i++)
        {
            var (session, probe) = await bench.SessionAsync(i);
            var reason = await probe.DisconnectedSignal.Task.WaitAsync(Wait.Default);
            var onError = probe.Events.Where(e => e.StartsWith("error:", StringComparison.Ordinal)).ToArray();
            errors += onError.Length;
            if (reason != DisconnectReason.PeerClosed || onError.Length > 0 || session.DisconnectException is not null)
                unclean.Add($"session {i}: {reason}, OnError [{string.Join(", ", onError)}], exception: {session.DisconnectException}");
        }

        Assert.True(unclean.Count == 0, $"{unclean.Count} of {Connections} peer closes were not a clean PeerClosed ({errors} OnError calls):{Environment.NewLine}{string.Join(Environment.NewLine, unclean)}");
        Assert.DoesNotContain(bench.Probe.Events, e => e.StartsWith("error:", StringComparison.Ordinal));
    }

    /// <summary>
    /// Connects with a plain <see cref="SslStream"/> over a raw socket, then closes as NetCoreServer's
    /// SslClient.Disconnect does: ShutdownAsync, then Shutdown(Both) and Close on the socket.
    /// </summary>
    private static async Task ConnectAndCloseLikeNetCoreServerAsync(IPEndPoint server)
    {
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await socket.ConnectAsync(server).WaitAsync(Wait.Default);
        var tls = new SslStream(new NetworkStream(socket, ownsSocket: false), leaveInnerStreamOpen: false);
        try
        {
            await tls.AuthenticateAsClientAsync(new SslClientAuthenticationOptions
            {
                TargetHost = "localhost",
                RemoteCertificateValidationCallback = (_, certificate, _, _) => certificate?.GetCertHashString() == TestCertificates.Server.Thumbprint,
            }).WaitAsync(Wait.Default);

            await tls.ShutdownAsync().WaitAsync(Wait.Default);
            socket.Shutdown(SocketShutdown.Both);
            socket.Close();
        }
        finally
        {
            await tls.DisposeAsync();
        }
    }
}
