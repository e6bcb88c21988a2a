using System;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Messaging;

/// <summary>Whole messages both ways over TCP, Unix sockets and TLS, with the client's awaitable receive.</summary>
[Collection("Messaging over sockets")]
public sealed class MessageEchoTests
{
    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Messages_of_every_size_come_back_whole_and_in_order(TransportKind kind)
    {
        using var server = TestMessageServer.Create(kind, s => new EchoMessageSession(s));
        Assert.True(server.Start());
        using var client = server.CreateClient();
        Assert.True(await client.ConnectAsync().WaitAsync(Wait.Default));

        // 0 bytes, small (framed on the stack), over 1 KiB (the writer), over the 64 KiB retention
        // limit (reassembled in pooled memory) and several MiB.
        int[] sizes = [0, 1, 37, 1020, 1021, 5000, 65_532, 65_533, 200_000, 3 * 1024 * 1024];
        for (var i = 0; i < sizes.Length; i++)
            Assert.True(client.SendAsync(Framing.Pattern(i * 1000, sizes[i])), $"send {i}");

        for (var i = 0; i < sizes.Length; i++)
        {
            using var message = await client.ReceiveAsync().AsTask().WaitAsync(Wait.Default);
            Assert.Equal(sizes[i], message.Length);
            Assert.True(message.Span.SequenceEqual(Framing.Pattern(i * 1000, sizes[i])), $"message {i} differs");
        }
    }
}
