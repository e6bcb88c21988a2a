using System;
using System.IO;
using System.Linq;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using NetServer.Tests.Tcp;
using Xunit;

namespace NetServer.Tests.Ssl;

/// <summary>
/// The hook order of <see cref="HookOrderTests"/> for what only TLS has: a connection that starts
/// closing before its handshake (in OnConnected, or while the handshake waits for the peer) runs
/// no handshake hook after OnDisconnecting, abandons the handshake, and still ends with exactly one
/// OnDisconnected, last.
/// </summary>
public class TlsHookOrderTests
{
    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public async Task Tls_session_closed_in_OnConnected_runs_no_handshake_and_no_handshake_hook(bool graceful)
    {
        await using var harness = new ServerHarness(TransportKind.Ssl);
        HookOrderTests.RecordServerHooks(harness);
        harness.Probe.ConfigureSession = probe =>
        {
            probe.RecordHandshakes = true;
            probe.Connected = session =>
            {
                if (graceful)
                    Assert.True(session.Disconnect());
                else
                    session.Dispose();
            };
        };
        Assert.True(harness.Start());

        var clientProbe = new Probe { RecordHandshakes = true };
        using (var client = harness.CreateClient(clientProbe))
        {
            try
            {
                Assert.False(await client.ConnectAsync(CancellationToken.None).WaitAsync(Wait.Default));
            }
            catch (IOException)
            {
                // The server ended the connection before answering the client's hello: the client's handshake fails.
            }

            await clientProbe.DisconnectedSignal.Task.WaitAsync(Wait.Default);
            Assert.DoesNotContain("handshaked", clientProbe.Events);
        }

        await Wait.UntilAsync(() => !harness.Probe.Sessions.IsEmpty, "the session to be created");
        var probe = harness.Probe.Sessions.Values.Single();
        Assert.Equal(graceful ? DisconnectReason.LocalDisconnect : DisconnectReason.Disposed, await probe.DisconnectedSignal.Task.WaitAsync(Wait.Default));
        var events = await HookOrderTests.SettledEventsAsync(probe, "server-disconnected");
        // The server's OnConnected comes right after the session's, as over TCP; then no handshake hook.
        Assert.Equal(["connecting", "connected", "disconnecting", "server-connected", "disconnected", "server-disconnected"], events);
        Assert.DoesNotContain("handshaked", harness.Probe.Events);
    }

    [Fact]
    public async Task Tls_session_that_queues_bytes_and_disconnects_in_OnConnected_still_sends_them_raising_no_handshake_hook()
    {
        // "Server full" and goodbye: the bytes can only go out after the handshake, which the
        // graceful close therefore lets finish, silently on the session's side.
        await using var harness = new ServerHarness(TransportKind.Ssl);
        HookOrderTests.RecordServerHooks(harness);
        var farewell = Framing.Pattern(0, 100_000);
        harness.Probe.ConfigureSession = probe =>
        {
            probe.RecordHandshakes = true;
            probe.Connected = session =>
            {
                Assert.True(session.SendAsync(farewell));
                Assert.True(session.Disconnect());
            };
        };
        Assert.True(harness.Start());

        var clientProbe = new Probe { RecordHandshakes = true };
        var received = new MemoryStream();
        clientProbe.Received = (_, buffer, offset, size) =>
        {
            lock (received)
                received.Write(buffer, (int)offset, (int)size);
        };
        using var client = harness.CreateClient(clientProbe);
        Assert.True(
            await client.ConnectAsync(CancellationToken.None).WaitAsync(Wait.Default),
            $"The client's connect failed; its hooks: {string.Join(", ", clientProbe.Events)}; closed with {client.DisconnectReason}: {client.DisconnectException}");
        Assert.Equal(DisconnectReason.PeerClosed, await clientProbe.DisconnectedSignal.Task.WaitAsync(Wait.Default));
        lock (received)
            Assert.Equal(farewell, received.ToArray());

        var probe = harness.Probe.Sessions.Values.Single();
        Assert.Equal(DisconnectReason.LocalDisconnect, await probe.DisconnectedSignal.Task.WaitAsync(Wait.Default));
        var events = await HookOrderTests.SettledEventsAsync(probe, "server-disconnected");
        Assert.Equal(["connecting", "connected", "disconnecting", "server-connected", "disconnected", "server-disconnected"], events);
        Assert.DoesNotContain("handshaked", harness.Probe.Events);
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public async Task Tls_client_closed_in_OnConnected_runs_no_handshake_and_no_handshake_hook(bool graceful)
    {
        await using var harness = new ServerHarness(TransportKind.Ssl);
        harness.Probe.ConfigureSession = probe => probe.RecordHandshakes = true;
        Assert.True(harness.Start());

        var probe = new Probe { RecordHandshakes = true };
        HookOrderTests.RecordClientHooks(probe);
        using var client = harness.CreateClient(probe);
        probe.Connected = _ =>
        {
            if (graceful)
                client.Disconnect();
            else
                client.Dispose();
        };

        Assert.False(await client.ConnectAsync(CancellationToken.None).WaitAsync(Wait.Default));
        Assert.Equal(graceful ? DisconnectReason.LocalDisconnect : DisconnectReason.Disposed, await probe.DisconnectedSignal.Task.WaitAsync(Wait.Default));
        Assert.False(client.IsConnected);
        Assert.Equal(["connecting", "connected", "disconnecting", "disconnected"], await HookOrderTests.SettledEventsAsync(probe, "disconnected"));

        // The server sees a connection that ends without a handshake, and never a handshaked session.
        await Wait.UntilAsync(() => harness.Probe.Sessions.Values.Any(p => p.DisconnectedCount == 1), "the server's session to end");
        Assert.DoesNotContain(harness.Probe.Sessions.Values, p => p.Events.Contains("handshaked"));
    }

    [Fact]
    public async Task Tls_session_closed_while_its_handshake_waits_ends_it_without_OnHandshakeFailed_after_OnDisconnecting()
    {
        await using var harness = new ServerHarness(TransportKind.Ssl);
        HookOrderTests.RecordServerHooks(harness);
        ((ProbeSslServer)harness.Server).Context.HandshakeTimeout = TimeSpan.FromSeconds(2);
        harness.Probe.ConfigureSession = probe => probe.RecordHandshakes = true;
        var closing = new TaskCompletionSource<StreamSession>(TaskCreationOptions.RunContinuationsAsynchronously);
        harness.Probe.Connected = session => closing.TrySetResult(session);
        Assert.True(harness.Start());

        // A peer that connects and never says hello: the session's handshake waits for it.
        using var silent = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await silent.ConnectAsync(harness.Endpoint).WaitAsync(Wait.Default);
        var session = await closing.Task.WaitAsync(Wait.Default);
        var probe = harness.Probe.Sessions[session.Id];
        await Wait.UntilAsync(() => probe.Events.Contains("handshaking"), "the handshake to start");

        // A graceful close while the handshake waits ends it at once: nothing can be sent before it.
        var watch = System.Diagnostics.Stopwatch.StartNew();
        Assert.True(await HarnessExtensions.RunBlocking(session.Disconnect).WaitAsync(Wait.Default));
        Assert.Equal(DisconnectReason.LocalDisconnect, await probe.DisconnectedSignal.Task.WaitAsync(Wait.Default));
        Assert.True(watch.Elapsed < TimeSpan.FromSeconds(1.5), $"The close waited {watch.Elapsed} for the handshake (timeout 2 s).");

        // Past the handshake timeout: the abandoned handshake reports nothing.
        await Task.Delay(TimeSpan.FromSeconds(2.2));
        var events = await HookOrderTests.SettledEventsAsync(probe, "server-disconnected");
        Assert.Equal(["connecting", "connected", "handshaking", "disconnecting", "disconnected", "server-disconnected"], events);
        Assert.Equal(DisconnectReason.LocalDisconnect, session.DisconnectReason);
        Assert.Null(session.DisconnectException);
    }
}
