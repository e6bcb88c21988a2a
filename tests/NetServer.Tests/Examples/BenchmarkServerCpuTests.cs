using System;
using System.Globalization;
using System.Text.Json;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Examples;

/// <summary>
/// netserver-bench's <c>--server-pid</c>: a client that drives a server in another process reports
/// that process's CPU time over the measured window, per message (what build/bench.sh and
/// build/compare-echoref.sh hold against echoref's).
/// </summary>
public sealed class BenchmarkServerCpuTests
{
    private const string Cli = "netserver-bench";
    private static readonly TimeSpan s_timeout = TimeSpan.FromSeconds(60);

    [Theory]
    [InlineData("echo")]
    [InlineData("reply")]
    public async Task A_client_reports_the_server_processs_cpu_time_per_message(string scenario)
    {
        if (!OperatingSystem.IsLinux())
            return; // the CPU time comes from /proc: elsewhere there is no figure to check
        await using var server = ProgramProcess.Start(Cli, s_timeout, ["tcp", "echo", "--role", "server", "-p", "0", "-z", "0", "-q"]);
        var port = Port(await server.WaitForLineAsync("Server listening on "));

        await using var client = ProgramProcess.Start(Cli, s_timeout,
            ["tcp", scenario, "--role", "client", "-p", port, "-c", "4", "-z", "2", "-q", "--server-pid", server.ProcessId.ToString(CultureInfo.InvariantCulture)]);
        var result = await ResultAsync(client);
        Assert.Equal(0, await client.WaitForExitAsync());

        // The server echoed millions of bytes in the window: it used CPU time (in 10-ms steps), and
        // the per-message figure is that time over the messages the client counted.
        var seconds = result.GetProperty("serverCpuSeconds").GetDouble();
        var messages = result.GetProperty("totalMessages").GetInt64();
        var perMessage = result.GetProperty("serverCpuNsPerMessage").GetDouble();
        Assert.True(seconds > 0, $"The server used no CPU time in the window: {result}");
        Assert.True(messages > 0);
        Assert.Equal(seconds * 1e9 / messages, perMessage, tolerance: Math.Max(0.1, perMessage * 0.01));
        Assert.Contains("Server CPU: ", client.Transcript, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Without_server_pid_the_report_has_no_server_cpu_figure()
    {
        await using var bench = ProgramProcess.Start(Cli, s_timeout, ["tcp", "echo", "-c", "1", "-z", "1", "-q"]);
        var result = await ResultAsync(bench);
        Assert.Equal(0, await bench.WaitForExitAsync());
        Assert.False(result.TryGetProperty("serverCpuNsPerMessage", out _), result.ToString());
    }

    [Theory]
    [InlineData("tcp", "echo", "--server-pid", "1")]
    [InlineData("tcp", "latency", "--role", "client", "--server-pid", "1")]
    public async Task Server_pid_is_refused_where_no_server_runs_in_another_process(params string[] args)
    {
        await using var bench = ProgramProcess.Start(Cli, s_timeout, args);
        Assert.Equal(2, await bench.WaitForExitAsync());
        Assert.Contains("--server-pid is for a client role", bench.Transcript, StringComparison.Ordinal);
    }

    private static string Port(string listening) =>
        listening["Server listening on ".Length..].Split(';')[0].Split(':')[^1];

    private static async Task<JsonElement> ResultAsync(ProgramProcess bench)
    {
        var line = await bench.WaitForLineAsync("{\"protocol\"");
        using var document = JsonDocument.Parse(line);
        return document.RootElement.Clone();
    }
}
