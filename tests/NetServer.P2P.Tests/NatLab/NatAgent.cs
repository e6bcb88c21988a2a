using System;
using System.Collections.Generic;
using System.Globalization;
using System.Linq;
using System.Net;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.P2P.Tests.Nat;

/// <summary>
/// The test's side of one agent process (tests/NetServer.P2P.NatAgent) running in a lab namespace:
/// each command is a line typed at it and waits (bounded) for its one reply line; event lines
/// (<c>received</c>, <c>reflected</c>, <c>accepted</c>) that arrive meanwhile are kept for
/// <see cref="WaitForAsync"/>. An <c>error</c> line fails the test at once with the transcript.
/// </summary>
internal sealed class NatAgent : IAsyncDisposable
{
    /// <summary>The wait for a datagram that should not come (the agent's default); the lab delivers in microseconds.</summary>
    public const int AbsenceWaitMilliseconds = 1000;

    private readonly ProgramProcess _process;
    private readonly List<AgentReply> _pending = [];
    private readonly List<AgentReply> _startLines = [];

    private NatAgent(ProgramProcess process, string ns)
    {
        _process = process;
        Namespace = ns;
    }

    public string Namespace { get; }

    /// <summary>The agent's process id (from its <c>ready</c> line).</summary>
    public int ProcessId { get; private set; }

    /// <summary>The lines printed before <c>ready</c>: <c>listening udp=EP tcp=EP</c> (reflector), <c>bound udp=EP</c> (probe).</summary>
    public IReadOnlyList<AgentReply> StartLines => _startLines;

    /// <summary>The probe's UDP socket (<c>bound udp=</c>), 0.0.0.0:PORT when bound to any address.</summary>
    public IPEndPoint BoundEndpoint => _startLines.First(line => line.Verb == "bound").Endpoint("udp");

    public string Transcript => _process.Transcript;

    /// <summary>Waits for the agent's <c>ready</c> line; disposes it when it fails to start.</summary>
    internal static async Task<NatAgent> StartAsync(ProgramProcess process, string ns)
    {
        var agent = new NatAgent(process, ns);
        try
        {
            while (true)
            {
                var line = await agent.NextLineAsync("its \"ready\" line");
                if (line.Verb == "ready")
                {
                    agent.ProcessId = int.Parse(line["pid"], CultureInfo.InvariantCulture);
                    return agent;
                }

                agent._startLines.Add(line);
            }
        }
        catch
        {
            await process.DisposeAsync();
            throw;
        }
    }

    /// <summary>Types <paramref name="command"/> and returns its reply: the next line whose verb is one of <paramref name="replyVerbs"/>.</summary>
    public async Task<AgentReply> CommandAsync(string command, params string[] replyVerbs)
    {
        await _process.TypeAsync(command);
        return await WaitForMatchAsync(reply => replyVerbs.Contains(reply.Verb), $"a reply ({string.Join(" or ", replyVerbs)}) to \"{command}\"");
    }

    /// <summary>The next line (kept or new) with <paramref name="verb"/> that <paramref name="match"/> accepts.</summary>
    public Task<AgentReply> WaitForAsync(string verb, Func<AgentReply, bool>? match = null) =>
        WaitForMatchAsync(reply => reply.Verb == verb && (match is null || match(reply)), $"a \"{verb}\" line");

    // ---- probe commands ----

    /// <summary><c>map</c>: the endpoint the reflector at <paramref name="reflector"/> saw this probe's socket as; null when no answer came.</summary>
    public async Task<IPEndPoint?> MapAsync(IPEndPoint reflector, int waitMilliseconds = AbsenceWaitMilliseconds)
    {
        var reply = await CommandAsync($"map {reflector} {waitMilliseconds}", "mapped", "timeout");
        return reply.Verb == "mapped" ? reply.Endpoint("observed") : null;
    }

    /// <summary><c>send</c> from the probe's socket.</summary>
    public Task<AgentReply> SendAsync(IPEndPoint remote, string text) => CommandAsync($"send {remote} {text}", "sent");

    /// <summary><c>recv</c>: the next datagram (<c>from</c>, <c>text</c>), or null when none came within the wait.</summary>
    public async Task<AgentReply?> ReceiveAsync(int waitMilliseconds = AbsenceWaitMilliseconds)
    {
        var reply = await CommandAsync($"recv {waitMilliseconds}", "received", "timeout");
        return reply.Verb == "received" ? reply : null;
    }

    /// <summary><c>tcp</c>: the endpoint the reflector saw a TCP connection come from, or null when it failed (the reason in the transcript).</summary>
    public async Task<IPEndPoint?> TcpMapAsync(IPEndPoint reflector, int waitMilliseconds = 5000)
    {
        var reply = await CommandAsync($"tcp {reflector} {waitMilliseconds}", "tcp-mapped", "tcp-failed");
        return reply.Verb == "tcp-mapped" ? reply.Endpoint("observed") : null;
    }

    // ---- reflector commands ----

    /// <summary><c>send</c> from the reflector's socket bound at <paramref name="local"/>.</summary>
    public Task<AgentReply> SendFromAsync(IPEndPoint local, IPEndPoint remote, string text) => CommandAsync($"send {local} {remote} {text}", "sent");

    public async ValueTask DisposeAsync() => await _process.DisposeAsync();

    public override string ToString() => $"agent {ProcessId} in {Namespace}";

    private async Task<AgentReply> WaitForMatchAsync(Func<AgentReply, bool> match, string what)
    {
        var kept = _pending.FindIndex(reply => match(reply));
        if (kept >= 0)
        {
            var reply = _pending[kept];
            _pending.RemoveAt(kept);
            return reply;
        }

        while (true)
        {
            var line = await NextLineAsync(what);
            if (match(line))
                return line;
            _pending.Add(line);
        }
    }

    // Fails the test when the output ends, a line does not come in time, or the agent reports an error.
    private async Task<AgentReply> NextLineAsync(string what)
    {
        var text = await _process.ReadLineAsync();
        Assert.True(text is not null, $"The agent in {Namespace} exited while the test waited for {what}. Output:{Environment.NewLine}{_process.Transcript}");
        var line = AgentReply.Parse(text);
        Assert.False(line.IsError, $"The agent in {Namespace} reported, while the test waited for {what}: {line.Line}{Environment.NewLine}Output:{Environment.NewLine}{_process.Transcript}");
        return line;
    }
}
