using System;
using System.IO;
using System.Net.Sockets;
using System.Threading.Tasks;

namespace NetServer.P2P.NatAgent;

/// <summary>
/// The NAT lab's agent: runs inside a network namespace and is driven by lines on stdin, answering
/// with lines on stdout (the whole protocol: docs/nat-lab.md). Usage:
/// <c>dotnet NetServer.P2P.NatAgent.dll MODE [ARGS...]</c> with MODE <c>reflector</c> or <c>probe</c>.
/// </summary>
/// <remarks>
/// Every output line is a verb followed by <c>key=value</c> fields whose values hold no spaces
/// (<c>mapped via=203.0.113.1:3478 observed=203.0.113.11:40000 rtt_us=180</c>), except
/// <c>error</c>, followed by free text. After its mode's own start lines it prints
/// <c>ready pid=N</c>; then each command line gets exactly one reply line, and the receive loops
/// may print event lines (<c>received</c>, <c>reflected</c>, <c>accepted</c>, <c>stray</c>) in
/// between, never with the verb of a reply of the same mode. It exits on <c>quit</c> or at the
/// end of stdin, so it never outlives the test process that started it.
/// A new mode (a P2P <c>peer</c> hosting a RelayClient) is one more <see cref="IAgentMode"/>
/// added to <see cref="CreateMode"/>.
/// </remarks>
internal static class Program
{
    private const string Usage = "usage: reflector ADDRESS:PORT [ADDRESS:PORT...] | probe [ADDRESS:PORT] | relay PFX ADDRESS:PORT | peer CA RELAY_ADDRESS:PORT NAME [KEEPALIVE_MS]";

    private static async Task<int> Main(string[] args)
    {
        try
        {
            await using var mode = CreateMode(args);
            await mode.StartAsync();
            AgentOutput.Line($"ready pid={Environment.ProcessId}");
            await RunCommandsAsync(mode);
            return 0;
        }
        catch (Exception e)
        {
            AgentOutput.Error($"{e.GetType().Name}: {e.Message}");
            return 1;
        }
    }

    private static IAgentMode CreateMode(string[] args) => args.Length == 0
        ? throw new AgentUsageException(Usage)
        : args[0] switch
        {
            "reflector" => ReflectorMode.Create(args[1..]),
            "probe" => ProbeMode.Create(args[1..]),
            "relay" => RelayMode.Create(args[1..]),
            "peer" => PeerMode.Create(args[1..]),
            _ => throw new AgentUsageException($"unknown mode '{args[0]}'; {Usage}"),
        };

    private static async Task RunCommandsAsync(IAgentMode mode)
    {
        using var stdin = new StreamReader(Console.OpenStandardInput());
        while (await stdin.ReadLineAsync() is { } line)
        {
            var words = line.Split(' ', StringSplitOptions.RemoveEmptyEntries);
            if (words.Length == 0)
                continue;
            if (words[0] == "quit")
                return;

            // A bad command gets an error line and the agent goes on: the test reads the reason.
            try
            {
                await mode.RunAsync(words);
            }
            catch (Exception e) when (e is AgentUsageException or FormatException or SocketException or ArgumentException)
            {
                AgentOutput.Error($"{words[0]}: {e.GetType().Name}: {e.Message}");
            }
        }
    }
}
