using System;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Messaging;

/// <summary>Server-wide sends and options of MessageServer.</summary>
[Collection("Messaging over sockets")]
public sealed class MessageServerTests
{
    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task MulticastAsync_waits_for_a_slow_session_instead_of_dropping_it_and_every_client_gets_every_message(TransportKind kind)
    {
        const int Count = 400;
        const int Size = 4096;
        var ready = 0;
        using var server = TestMessageServer.Create(kind, s => new DelegateSession(s)
        {
            Attached = static session => session.Connection!.OptionSendBufferLimit = 16 * 1024,
            Connected = session =>
            {
                session.Connection!.Socket!.SendBufferSize = 4096;
                Interlocked.Increment(ref ready);
            },
        });
        Assert.True(server.Start());
        using var fast = server.CreateClient();
        using var slow = server.CreateClient();
        slow.OptionReceiveQueueLimit = 16 * 1024; // stops reading until the test takes messages
        Assert.True(await fast.ConnectAsync().WaitAsync(Wait.Default));
        Assert.True(await slow.ConnectAsync().WaitAsync(Wait.Default));

        // Multicasts reach a session once it is ready, which the protocol's OnConnected follows.
        // Not ConnectedSessions: it counts a session from its accept, and over TLS the client's
        // ConnectAsync returns when the client has finished its handshake, while the server may
        // still be finishing its own (run in a loop under load, one session in four missed the
        // first 1 to 46 multicasts that way: "message 0 differs", it was a later message).
        await Wait.UntilAsync(() => Volatile.Read(ref ready) == 2, "both sessions to be ready");

        var multicasting = Task.Run(async () =>
        {
            for (var i = 0; i < Count; i++)
                Assert.True(await server.MulticastAsync(Framing.Pattern(i, Size)));
        });

        // Both read (the multicast serves the sessions in turn, so the fast one waits for the slow one too).
        await Task.WhenAll(new[] { fast, slow }.Select(client => Task.Run(async () =>
        {
            for (var i = 0; i < Count; i++)
            {
                using var message = await client.ReceiveAsync().AsTask().WaitAsync(Wait.Default);
                if (!message.Span.SequenceEqual(Framing.Pattern(i, Size)))
                {
                    var bytes = message.ToArray();
                    var actual = Enumerable.Range(0, Count).Where(j => bytes.AsSpan().SequenceEqual(Framing.Pattern(j, Size))).DefaultIfEmpty(-1).First();
                    Assert.Fail($"Message {i} to the {(client == slow ? "slow" : "fast")} client differs: it is message {actual} (-1: none sent), {bytes.Length} bytes.");
                }
            }
        })));

        await multicasting.WaitAsync(Wait.Default);
        Assert.Equal(2, server.ConnectedSessions);
        Assert.True(fast.IsConnected && slow.IsConnected);
    }

    [Fact]
    public async Task OptionNoDelay_reaches_the_accepted_sockets()
    {
        var connected = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
        using var server = TestMessageServer.Create(TransportKind.Tcp, s => new DelegateSession(s)
        {
            Connected = session => connected.TrySetResult(session.Connection!.Socket!.NoDelay),
        });
        server.OptionNoDelay = true;
        Assert.True(server.Start());
        using var client = server.CreateClient();
        Assert.True(await client.ConnectAsync().WaitAsync(Wait.Default));
        Assert.True(await connected.Task.WaitAsync(Wait.Default));
        Assert.Single(server.Sessions);
    }
}
