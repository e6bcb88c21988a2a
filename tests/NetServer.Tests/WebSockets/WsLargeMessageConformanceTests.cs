using System;
using System.Collections.Generic;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.WebSockets;

/// <summary>
/// Autobahn group 9 (limits and performance) against our WsServer, driven by a raw client: large
/// messages in one frame and in fragments come back intact, and a message over MaxMessageSize is
/// refused with 1009 from its header alone, before any of it is buffered.
/// </summary>
public sealed class WsLargeMessageConformanceTests
{
    private const int MiB = 1024 * 1024;

    /// <summary>Transport, opcode, size, fragment size (0: one frame), chunk size of the sends (0: one send).</summary>
    public static TheoryData<TransportKind, int, int, int, int> EchoCases
    {
        get
        {
            var data = new TheoryData<TransportKind, int, int, int, int>
            {
                // 9.1/9.2: one frame.
                { TransportKind.Tcp, WsWire.Text, 1 * MiB, 0, 0 },
                { TransportKind.Tcp, WsWire.Binary, 1 * MiB, 0, 0 },
                { TransportKind.Tcp, WsWire.Text, 4 * MiB, 0, 0 },
                { TransportKind.Tcp, WsWire.Binary, 4 * MiB, 0, 0 },
                { TransportKind.Tcp, WsWire.Text, 16 * MiB, 0, 0 }, // exactly the default MaxMessageSize

                // 9.3/9.4: fragmented.
                { TransportKind.Tcp, WsWire.Text, 4 * MiB, 64 * 1024, 0 },
                { TransportKind.Tcp, WsWire.Binary, 4 * MiB, 64 * 1024, 0 },
                { TransportKind.Tcp, WsWire.Binary, 1 * MiB, 1024, 0 },
                { TransportKind.Tcp, WsWire.Binary, 16 * MiB, 64 * 1024, 0 },

                // 9.5/9.6: one frame written in small sends.
                { TransportKind.Tcp, WsWire.Text, 1 * MiB, 0, 4096 },
                { TransportKind.Tcp, WsWire.Binary, 1 * MiB, 0, 997 },
            };
            if (SecureTransport.Enabled)
            {
                data.Add(TransportKind.Ssl, WsWire.Text, 1 * MiB, 0, 0);
                data.Add(TransportKind.Ssl, WsWire.Binary, 1 * MiB, 64 * 1024, 0);
            }

            return data;
        }
    }

    [Theory]
    [MemberData(nameof(EchoCases))]
    public async Task A_large_message_comes_back_intact(TransportKind kind, int opcode, int size, int fragment, int chunk)
    {
        await using var host = WsTestHost.Start(kind);
        using var client = await host.OpenAsync();
        var payload = WsWire.Payload(size, text: opcode == WsWire.Text);
        var frames = new List<byte[]>();
        if (fragment == 0)
        {
            frames.Add(WsWire.Frame(opcode, payload));
        }
        else
        {
            for (var at = 0; at < size; at += fragment)
                frames.Add(WsWire.Frame(at == 0 ? opcode : WsWire.Continuation, payload.AsSpan(at, Math.Min(fragment, size - at)), fin: at + fragment >= size));
        }

        await client.SendAsync(WsWire.Concat([.. frames]), chunk);
        await client.ExpectMessageAsync(opcode, payload, TimeSpan.FromSeconds(30));
        Assert.Empty(host.Log.Errors);
    }

    [Theory]
    [InlineData(WsOptions.DefaultMaxMessageSize + 1L)]
    [InlineData(int.MaxValue + 1L)]
    [InlineData(1L << 62)]
    public async Task A_frame_announcing_more_than_MaxMessageSize_is_refused_from_its_header(long announced)
    {
        // Only the header is sent: the 1009 cannot have waited for the payload.
        await using var host = WsTestHost.Start();
        await host.AssertFaultAsync(WsWire.Frame(WsWire.Binary, [], announced: announced), 1009);
    }

    [Theory]
    [InlineData(WsWire.Text)]
    [InlineData(WsWire.Binary)]
    public async Task A_message_of_exactly_MaxMessageSize_passes_and_one_byte_more_is_refused(int opcode)
    {
        await using var host = WsTestHost.Start(configure: options => options.MaxMessageSize = 1000);
        using (var client = await host.OpenAsync())
        {
            var payload = WsWire.Payload(1000, opcode == WsWire.Text);
            await client.SendAsync(WsWire.Frame(opcode, payload));
            await client.ExpectMessageAsync(opcode, payload);
        }

        await host.AssertFaultAsync(WsWire.Frame(opcode, WsWire.Payload(1001, opcode == WsWire.Text)), 1009);
    }

    [Fact]
    public async Task Fragments_that_add_up_to_more_than_MaxMessageSize_are_refused_at_the_fragment_that_crosses_it()
    {
        await using var host = WsTestHost.Start(configure: options => options.MaxMessageSize = 1000);

        // 600 bytes, then 300 (900 so far, fine), then a header announcing 101 more: 1009 without its payload.
        var bytes = WsWire.Concat(
            WsWire.Frame(WsWire.Binary, new byte[600], fin: false),
            WsWire.Frame(WsWire.Continuation, new byte[300], fin: false),
            WsWire.Frame(WsWire.Continuation, [], announced: 101));
        await host.AssertFaultAsync(bytes, 1009);
    }

    [Fact]
    public async Task The_limit_counts_the_message_not_the_frame_after_a_message_ends()
    {
        // Two messages of 800 bytes each under a 1000-byte limit: each is within it.
        await using var host = WsTestHost.Start(configure: options => options.MaxMessageSize = 1000);
        using var client = await host.OpenAsync();
        var first = WsWire.Payload(800, text: false, seed: 1);
        var second = WsWire.Payload(800, text: false, seed: 2);
        await client.SendAsync(WsWire.Concat(
            WsWire.Frame(WsWire.Binary, first.AsSpan(0, 400), fin: false),
            WsWire.Frame(WsWire.Continuation, first.AsSpan(400)),
            WsWire.Frame(WsWire.Binary, second)));
        await client.ExpectMessageAsync(WsWire.Binary, first);
        await client.ExpectMessageAsync(WsWire.Binary, second);
        Assert.Empty(host.Log.Errors);
    }
}
