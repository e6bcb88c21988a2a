using System;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.P2P.Tests.Examples;

/// <summary>examples/RelayServer and examples/P2PChatClient run as examples/README.md says, as three processes.</summary>
public sealed class RelayExampleTests
{
    private static readonly TimeSpan s_timeout = TimeSpan.FromSeconds(60);

    [Fact]
    public async Task Two_chat_peers_talk_through_the_relay_privately_in_a_room_and_by_request()
    {
        var certs = ProgramProcess.RepositoryCertificates();
        await using var relay = ProgramProcess.Start("RelayServer", s_timeout, "0", "--certs", certs);
        var port = (await relay.ListeningPortAsync()).ToString(System.Globalization.CultureInfo.InvariantCulture);

        await using (var alice = ProgramProcess.Start("P2PChatClient", s_timeout, "alice", "127.0.0.1", port, "--certs", certs))
        await using (var bob = ProgramProcess.Start("P2PChatClient", s_timeout, "bob", "127.0.0.1", port, "--certs", certs))
        {
            await alice.WaitForLineAsync("Registered as alice");
            await bob.WaitForLineAsync("Registered as bob");
            await alice.WaitForLineAsync("* bob joined (path: relayed)");

            await alice.TypeAsync("/to bob psst");
            Assert.Equal("<alice to you> psst", await bob.WaitForLineAsync("<alice"));

            await bob.TypeAsync("/join lobby");
            await bob.WaitForLineAsync("* in room lobby with 0 other(s)");
            await alice.TypeAsync("/join lobby");
            await alice.WaitForLineAsync("* in room lobby with 1 other(s)");
            await alice.TypeAsync("/room lobby hello room");
            Assert.Equal("<alice in lobby> hello room", await bob.WaitForLineAsync("<alice"));

            await alice.TypeAsync("/ask bob ready?");
            Assert.StartsWith("= bob answers: bob heard 'ready?'", await alice.WaitForLineAsync("= bob answers"), StringComparison.Ordinal);
            await alice.TypeAsync("/peers");
            Assert.StartsWith("  bob: relayed, ", await alice.WaitForLineAsync("  bob:"), StringComparison.Ordinal);

            await alice.TypeAsync("/udp bob over the relay");
            Assert.Equal("<alice by udp, relayed> over the relay", await bob.WaitForLineAsync("<alice by udp"));
            await alice.TypeAsync("/punch bob");
            Assert.StartsWith("* path to bob: direct after ", await alice.WaitForLineAsync("* path to bob: direct after"), StringComparison.Ordinal);
            await alice.TypeAsync("/udp bob straight");
            Assert.Equal("<alice by udp, direct> straight", await bob.WaitForLineAsync("<alice by udp"));
            await alice.TypeAsync("/peers");
            Assert.StartsWith("  bob: direct, ", await alice.WaitForLineAsync("  bob:"), StringComparison.Ordinal);

            await bob.TypeAsync("");
            Assert.Equal(0, await bob.WaitForExitAsync());
            await alice.WaitForLineAsync("* bob left");
            await alice.TypeAsync("");
            Assert.Equal(0, await alice.WaitForExitAsync());
        }

        await relay.WaitForLineAsync("Left: alice");
        await relay.TypeAsync("");
        await relay.WaitForLineAsync("Stopped.");
        Assert.Equal(0, await relay.WaitForExitAsync());
    }
}
