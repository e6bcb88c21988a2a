using System;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Examples;

/// <summary>examples/SecureUdpEcho as a user runs it: lines come back through the sealed echo, a forged datagram is only counted.</summary>
public sealed class SecureUdpEchoExampleTests
{
    [Fact]
    public async Task SecureUdpEcho_echoes_typed_lines_sealed_and_only_counts_a_forgery()
    {
        await using var program = ProgramProcess.Start("SecureUdpEcho", "0");
        await program.WaitForLineAsync("Listening on 127.0.0.1:");
        await program.WaitForLineAsync("Type a line");

        await program.TypeAsync("hello, secure world");
        await program.WaitForLineAsync("Server opened \"hello, secure world\" from 127.0.0.1:");
        await program.WaitForLineAsync("Echo: hello, secure world");

        await program.TypeAsync("!forge");
        await program.WaitForLineAsync("Sent a forged datagram");
        await program.TypeAsync("second");
        await program.WaitForLineAsync("Echo: second");

        await program.TypeAsync(string.Empty);
        Assert.Equal("Server session: opened 2, authentication failures 1, replays 0; server dropped 1",
            await program.WaitForLineAsync("Server session: "));
        await program.WaitForLineAsync("Client session: sealed 2, opened 2");
        Assert.Equal(0, await program.WaitForExitAsync());
        Assert.DoesNotContain("forge\"", program.Transcript, StringComparison.Ordinal); // never delivered
        Assert.DoesNotContain("socket error", program.Transcript, StringComparison.OrdinalIgnoreCase);
    }
}
