using System;
using System.Globalization;
using System.IO;
using System.Net;
using System.Net.Sockets;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Examples;

/// <summary>examples/MessageServer and examples/MessageClient run as child processes, talking to each other over each transport.</summary>
public sealed class MessageExampleTests
{
    [Theory]
    [InlineData("tcp")]
    [InlineData("uds")]
    [InlineData("ssl")]
    public async Task The_client_sends_typed_lines_and_a_counted_batch_and_the_server_answers_each(string transport)
    {
        var socketPath = Path.Combine(Path.GetTempPath(), $"ns-msg-example-{Guid.NewGuid():N}.sock");
        await using var server = transport == "uds"
            ? ProgramProcess.Start("MessageServer", "uds", socketPath)
            : ProgramProcess.Start("MessageServer", transport, "0");
        var listening = await server.WaitForLineAsync("Listening on ");
        string[] target = transport == "uds"
            ? ["uds", socketPath]
            : [transport, "127.0.0.1", IPEndPoint.Parse(listening["Listening on ".Length..]).Port.ToString(CultureInfo.InvariantCulture)];

        // Typed lines: each is one message, and its reply is awaited and printed.
        await using (var client = ProgramProcess.Start("MessageClient", target))
        {
            await client.WaitForLineAsync("Connected to ");
            await client.TypeAsync("hello");
            Assert.Equal("Reply: #1 hello", await client.WaitForLineAsync("Reply: "));
            await client.TypeAsync("héllo wörld, ünïcode");
            Assert.Equal("Reply: #2 héllo wörld, ünïcode", await client.WaitForLineAsync("Reply: "));
            await client.TypeAsync(string.Empty);
            Assert.Equal(0, await client.WaitForExitAsync());
        }

        Assert.Contains("left (PeerClosed) after 2 messages", await NextSessionLeftAsync(server), StringComparison.Ordinal);

        // A batch with many replies in flight: every reply checked by the client.
        await using (var batch = ProgramProcess.Start("MessageClient", TimeSpan.FromSeconds(30), [.. target, "--count", "3000"]))
        {
            Assert.StartsWith("Got 3000 replies in ", await batch.WaitForLineAsync("Got "), StringComparison.Ordinal);
            Assert.Equal(0, await batch.WaitForExitAsync());
        }

        Assert.Contains("after 3000 messages", await NextSessionLeftAsync(server), StringComparison.Ordinal);

        await server.TypeAsync(string.Empty);
        await server.WaitForLineAsync("Stopped");
        Assert.Equal(0, await server.WaitForExitAsync());
        if (transport == "uds")
            Assert.False(File.Exists(socketPath), "The server left its socket file behind.");
    }

    [Fact]
    public async Task The_client_says_when_no_server_is_listening()
    {
        int port;
        using (var probe = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp))
        {
            probe.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            port = ((IPEndPoint)probe.LocalEndPoint!).Port; // free again once closed
        }

        await using var client = ProgramProcess.Start("MessageClient", "tcp", "127.0.0.1", port.ToString(CultureInfo.InvariantCulture));
        Assert.Contains("Is MessageServer running?", await client.WaitForLineAsync("Cannot connect to "), StringComparison.Ordinal);
        Assert.Equal(1, await client.WaitForExitAsync());
    }

    private static async Task<string> NextSessionLeftAsync(ProgramProcess server)
    {
        while (true)
        {
            var line = await server.WaitForLineAsync("Session ");
            if (line.Contains(" left (", StringComparison.Ordinal))
                return line;
        }
    }
}
