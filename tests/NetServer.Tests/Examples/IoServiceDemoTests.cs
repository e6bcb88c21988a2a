using System;
using System.Linq;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Examples;

/// <summary>The IoService example run as a user runs it: its printed order and counts.</summary>
public sealed class IoServiceDemoTests
{
    [Fact]
    public async Task The_demo_shows_dispatch_inline_post_queued_a_timer_on_a_loop_an_echo_on_the_loops_and_counts_every_word()
    {
        await using var demo = ProgramProcess.Start("IoServiceDemo", TimeSpan.FromSeconds(30), "100000");
        Assert.Equal(0, await demo.WaitForExitAsync());
        var lines = demo.Transcript.Split(Environment.NewLine);

        Assert.Equal("service started: 2 loops", lines[0]);
        Assert.StartsWith("1 posted work, on NetServer loop ", lines[1], StringComparison.Ordinal);
        Assert.StartsWith("2 dispatched", lines[2], StringComparison.Ordinal);
        Assert.StartsWith("3 back", lines[3], StringComparison.Ordinal);
        Assert.StartsWith("4 posted from a loop", lines[4], StringComparison.Ordinal);
        Assert.StartsWith("timer expired on NetServer loop ", lines[5], StringComparison.Ordinal);

        // The echo went through a server and a client on the loops (Linux: hooks on loop threads).
        Assert.Matches("^echo \"hello loops\": server hook on NetServer loop [01], client hook on NetServer loop [01]$", lines[6]);
        Assert.Equal("service stopped", lines[7]);

        // 100,000 words over five: every one counted once, none lost at the stop.
        var counts = lines.Skip(8).Take(5).Select(l => l.Split(' ')).ToArray();
        Assert.Equal(new[] { "alpha:", "beta:", "gamma:", "delta:", "epsilon:" }, counts.Select(c => c[0]));
        Assert.All(counts, c => Assert.Equal("20000", c[1]));
        Assert.Equal("errors: 0", lines[13]);
    }
}
