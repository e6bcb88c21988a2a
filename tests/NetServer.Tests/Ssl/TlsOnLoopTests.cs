using System;
using System.Linq;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Ssl;

/// <summary>
/// TLS sessions and clients pinned to the loops of an <see cref="IoService"/> (Linux, net10.0):
/// the SslStream runs over the loop's own transport stream, its handshake on the thread pool, and
/// the receive hooks on the loop's thread once it is done.
/// </summary>
public sealed class TlsOnLoopTests
{
    private static readonly TimeSpan s_timeout = TimeSpan.FromSeconds(30);

    [Net10Fact("the loops poll sockets only in the net10.0 build")]
    public async Task A_handshake_waiting_for_its_peer_holds_up_no_other_connection_of_its_loop_and_still_times_out()
    {
        if (!OperatingSystem.IsLinux())
            return;
        using var service = new IoService(1); // every connection on the same loop
        Assert.True(service.Start());
        await using var harness = new ServerHarness(TransportKind.Ssl);
        harness.Server.Service = service;
        ((SslServer)harness.Server).Context.HandshakeTimeout = TimeSpan.FromSeconds(1);
        string? receivedOn = null;
        harness.Probe.ConfigureSession = probe => probe.Received = (session, buffer, offset, size) =>
        {
            receivedOn = Thread.CurrentThread.Name;
            session.SendAsync(buffer, offset, size);
        };
        Assert.True(harness.Start());

        // A peer that starts a ClientHello (a record header) and then says nothing more.
        using var stalled = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await stalled.ConnectAsync(harness.Endpoint).WaitAsync(s_timeout);
        await stalled.SendAsync(new byte[] { 0x16, 0x03, 0x01, 0x02, 0x00 }, SocketFlags.None);
        await Wait.UntilAsync(() => harness.Probe.Sessions.Count == 1, "the stalled session", s_timeout);
        var stalledProbe = harness.Probe.Sessions.Values.Single();
        var stalledSession = harness.FindSession(harness.Probe.Sessions.Keys.Single())!;

        // Meanwhile a real TLS client on the same loop completes its handshake and is echoed.
        var clientProbe = new Probe();
        var echoed = new TaskCompletionSource<string>(TaskCreationOptions.RunContinuationsAsynchronously);
        clientProbe.Received = (_, buffer, offset, size) => echoed.TrySetResult(System.Text.Encoding.ASCII.GetString(buffer, (int)offset, (int)size));
        using var client = harness.CreateClient(clientProbe);
        client.Service = service;
        Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout));
        await harness.Probe.WaitForSessionsAsync(1);
        Assert.True(client.SendAsync("ping"u8.ToArray()));
        Assert.Equal("ping", await echoed.Task.WaitAsync(s_timeout));
        Assert.False(stalledProbe.HandshakedSignal.Task.IsCompleted);

        var session = harness.Probe.Sessions.Keys.Select(harness.FindSession).Single(s => s is not null && !ReferenceEquals(s, stalledSession))!;
        Assert.Same(service.Loops[0], session.Loop);
        Assert.Same(service.Loops[0], stalledSession.Loop);
        Assert.Same(service.Loops[0], client.Loop);
        Assert.StartsWith("NetServer loop", receivedOn);

        // The stalled handshake ends by its timeout, on the loop transport as on the default one.
        var failure = await stalledProbe.HandshakeFailedSignal.Task.WaitAsync(s_timeout);
        Assert.IsType<TimeoutException>(failure);
        Assert.Equal(DisconnectReason.HandshakeFailed, await stalledProbe.DisconnectedSignal.Task.WaitAsync(s_timeout));
        var buffer = new byte[64];
        var ended = await ReceiveEndAsync(stalled, buffer);
        Assert.True(ended, "the stalled peer sees its connection end");
        Assert.True(client.IsConnected);
    }

    [Net10Fact("the loops poll sockets only in the net10.0 build")]
    public async Task A_handshake_whose_client_hello_already_waits_in_the_socket_starts_off_the_loop_thread()
    {
        if (!OperatingSystem.IsLinux())
            return;
        using var service = new IoService(1);
        Assert.True(service.Start());
        await using var harness = new ServerHarness(TransportKind.Ssl);
        harness.Server.Service = service;
        var context = ((SslServer)harness.Server).Context;

        // The server reads the hello and picks its certificate (then signs) within the first read
        // when the hello is there before the handshake starts: held back by the connect hook here.
        using var helloSent = new ManualResetEventSlim();
        string? connectedOn = null;
        string? selectedOn = null;
        context.ServerCertificateSelectionCallback = (_, _) =>
        {
            selectedOn = Thread.CurrentThread.Name ?? "(unnamed)";
            return TestCertificates.Server;
        };
        harness.Probe.ConfigureSession = probe => probe.Connected = _ =>
        {
            connectedOn = Thread.CurrentThread.Name;
            Assert.True(helloSent.Wait(s_timeout));
        };
        Assert.True(harness.Start());

        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await socket.ConnectAsync(harness.Endpoint).WaitAsync(s_timeout);
        await using var tls = new System.Net.Security.SslStream(new NetworkStream(socket), false,
            (_, presented, _, _) => presented?.GetCertHashString() == TestCertificates.Server.GetCertHashString()); // pinned
        var handshake = tls.AuthenticateAsClientAsync("localhost"); // writes the hello, then waits for the answer
        await Wait.UntilAsync(() => connectedOn is not null, "the server's connect hook", s_timeout);
        var session = harness.FindSession(harness.Probe.Sessions.Keys.Single())!;
        await Wait.UntilAsync(() => session.Socket is { Available: > 0 }, "the hello in the server's socket", s_timeout);
        helloSent.Set();
        await handshake.WaitAsync(s_timeout);

        Assert.StartsWith("NetServer loop", connectedOn);
        Assert.NotNull(selectedOn);
        Assert.DoesNotContain("NetServer loop", selectedOn);
    }

    [Net10Fact("the loops poll sockets only in the net10.0 build")]
    public async Task A_large_echo_over_TLS_on_a_loop_fills_the_kernel_buffers_and_arrives_whole_and_in_order()
    {
        if (!OperatingSystem.IsLinux())
            return;
        using var service = new IoService(2);
        Assert.True(service.Start());
        await using var harness = new ServerHarness(TransportKind.Ssl);
        harness.Server.Service = service;
        harness.Probe.ConfigureSession = probe =>
        {
            probe.Connected = s => s.OptionSendBufferLimit = 64 << 20;
            probe.Received = (session, buffer, offset, size) => session.SendAsync(buffer, offset, size);
        };
        Assert.True(harness.Start());

        var clientProbe = new Probe();
        var received = new System.IO.MemoryStream();
        clientProbe.Received = (_, buffer, offset, size) =>
        {
            lock (received)
                received.Write(buffer, (int)offset, (int)size);
        };
        using var client = harness.CreateClient(clientProbe);
        client.Service = service;
        client.OptionSendBufferLimit = 64 << 20;
        Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(s_timeout));
        Assert.NotNull(client.Loop);

        var data = new byte[16 << 20];
        for (var i = 0; i < data.Length; i++)
            data[i] = (byte)((i * 7) + (i >> 16));
        Assert.True(client.SendAsync(data)); // one send: the echo comes back while it is still going out
        await Wait.UntilAsync(() => { lock (received) return received.Length == data.Length; }, "the whole echo", s_timeout);
        Assert.Equal(data, received.ToArray());
    }

    private static async Task<bool> ReceiveEndAsync(Socket socket, byte[] buffer)
    {
        try
        {
            while (await socket.ReceiveAsync(buffer, SocketFlags.None).WaitAsync(s_timeout) > 0)
            {
            }

            return true;
        }
        catch (SocketException)
        {
            return true; // reset
        }
    }
}
