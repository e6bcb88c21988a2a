using System;
using System.Globalization;
using System.Net;
using System.Text;
using System.Threading;

namespace NetServer.P2P.NatAgent;

/// <summary>Writes the agent's output lines (one whole line at a time: receive loops write concurrently with command replies) and parses its arguments.</summary>
internal static class AgentOutput
{
    /// <summary>How long a command that waits for a datagram or a connection waits when the command line does not say.</summary>
    public const int DefaultWaitMilliseconds = 1000;

    private static readonly Lock s_lock = new();

    public static void Line(string line)
    {
        lock (s_lock)
            Console.Out.WriteLine(line);
    }

    public static void Error(string message) => Line("error " + message.ReplaceLineEndings(" "));

    /// <summary>A datagram's payload as fields: <c>bytes=N text=T</c> when it is printable ASCII without spaces, else <c>bytes=N hex=H</c>.</summary>
    public static string Describe(ReadOnlySpan<byte> payload)
    {
        foreach (var b in payload)
        {
            if (b is < 0x21 or > 0x7e)
                return $"bytes={payload.Length} hex={Convert.ToHexString(payload)}";
        }

        return $"bytes={payload.Length} text={Encoding.ASCII.GetString(payload)}";
    }

    public static IPEndPoint Endpoint(string[] words, int index) =>
        index < words.Length ? IPEndPoint.Parse(words[index]) : throw new AgentUsageException($"{words[0]}: ADDRESS:PORT missing");

    public static string Word(string[] words, int index) =>
        index < words.Length ? words[index] : throw new AgentUsageException($"{words[0]}: argument {index} missing");

    public static int WaitMilliseconds(string[] words, int index) =>
        index < words.Length ? int.Parse(words[index], NumberStyles.None, CultureInfo.InvariantCulture) : DefaultWaitMilliseconds;
}
