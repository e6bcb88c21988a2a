using System;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Protobuf.Tests.Examples;

/// <summary>examples/ProtoServer and examples/ProtoClient run as the README says, as two processes.</summary>
public sealed class ProtoExampleTests
{
    [Fact]
    public async Task The_client_gets_every_typed_reply_and_sees_the_slow_one_time_out()
    {
        await using var server = ProgramProcess.Start("ProtoServer", TimeSpan.FromSeconds(60), "0");
        var listening = await server.WaitForLineAsync("Listening on ");
        var port = listening[(listening.LastIndexOf(':') + 1)..];

        await using (var client = ProgramProcess.Start("ProtoClient", TimeSpan.FromSeconds(60), port))
        {
            Assert.Equal("sum(1..100) = 5050 (100 values)", await client.WaitForLineAsync("sum(1..100) "));
            Assert.Equal("sum(1..1000) = 500500 (1000 values)", await client.WaitForLineAsync("sum(1..1000) "));
            var slow = await client.WaitForLineAsync("slow: ");
            Assert.StartsWith("slow: No reply to request 11 within 100 ms.", slow, StringComparison.Ordinal);
            Assert.EndsWith("Pending now: 0.", slow, StringComparison.Ordinal);
            Assert.Equal("Done: 10 replies, 0 failed.", await client.WaitForLineAsync("Done: "));
            Assert.Equal(0, await client.WaitForExitAsync());
        }

        await server.WaitForLineAsync("Session ");
        await server.TypeAsync("");
        await server.WaitForLineAsync("Stopped.");
        Assert.Equal(0, await server.WaitForExitAsync());
    }
}
