using System;
using System.IO;
using System.Linq;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Examples;

/// <summary>
/// examples/FramedEcho: the protocol docs/protocols.md shows, built in an assembly of its own (no
/// access to NetServer's internals), hosted by a TCP, a Unix-socket and a TLS session and by a client.
/// </summary>
public sealed class FramedEchoExampleTests
{
    [Theory]
    [InlineData("tcp")]
    [InlineData("uds")]
    [InlineData("ssl")]
    public async Task The_framing_protocol_echoes_every_frame_over_each_transport(string transport)
    {
        await using var program = ProgramProcess.Start("FramedEcho", TimeSpan.FromSeconds(90), transport, "20000");
        var line = await program.WaitForLineAsync("Echoed ");
        Assert.StartsWith($"Echoed 20000 frames (", line, StringComparison.Ordinal);
        Assert.EndsWith($"over {transport}.", line, StringComparison.Ordinal);
        Assert.Equal(0, await program.WaitForExitAsync());
    }

    [Fact]
    public void The_protocol_in_the_docs_is_the_one_the_example_runs()
    {
        var root = RepositoryRoot();
        var source = File.ReadAllText(Path.Combine(root, "examples", "FramedEcho", "FramedEcho.cs")).ReplaceLineEndings("\n");
        var docs = File.ReadAllText(Path.Combine(root, "docs", "protocols.md")).ReplaceLineEndings("\n");
        var start = source.IndexOf("public sealed class FramedEcho", StringComparison.Ordinal);
        Assert.True(start >= 0);
        var code = source[start..].TrimEnd();
        Assert.Contains(code, docs, StringComparison.Ordinal);
        Assert.True(code.Count(c => c == '\n') + 1 <= 40, "The example is meant to stay short.");
    }

    private static string RepositoryRoot()
    {
        var directory = new DirectoryInfo(AppContext.BaseDirectory);
        while (directory is not null && !File.Exists(Path.Combine(directory.FullName, "NetServer.sln")))
            directory = directory.Parent;
        return directory?.FullName ?? throw new InvalidOperationException("The repository root was not found above the test binaries.");
    }
}
