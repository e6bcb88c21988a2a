using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;

namespace NetServer.P2P.Tests.Nat;

/// <summary>
/// A network of namespaces on this machine for the P2P tests (docs/nat-lab.md): a public segment
/// (a bridge) with the relay's namespace on it, and peers either on it directly or each behind a
/// NAT router namespace of its own type. Needs root and ip/iptables: use it from a
/// <see cref="NatLabFactAttribute"/> test. Dispose it (<c>await using</c>): that kills the programs
/// it started and deletes its namespaces, with every link and rule in them.
/// </summary>
/// <example>
/// <code>
/// await using var lab = await NatLab.CreateAsync(NatType.EndpointIndependent, NatType.Symmetric);
/// await using var reflector = await lab.StartReflectorAsync();
/// await using var probe = await lab.StartProbeAsync(lab.Peers[0]);
/// var mapped = await probe.MapAsync(lab.Relay.Reflector);   // 203.0.113.11:port
/// </code>
/// </example>
internal sealed partial class NatLab : IAsyncDisposable
{
    /// <summary>The agent program's name (tests/NetServer.P2P.NatAgent), built next to the tests.</summary>
    public const string AgentProgram = "NetServer.P2P.NatAgent";

    // Labs not yet disposed, deleted at process exit if a test forgot to (a killed process is left to the next run's sweep).
    private static readonly ConcurrentDictionary<NatLab, bool> s_live = new();

    private readonly NatLabOptions _options;
    private readonly List<string> _namespaces = [];
    private readonly List<NatPeer> _peers = [];
    private readonly List<IAsyncDisposable> _programs = [];
    private string _internet = "";
    private bool _disposed;

    static NatLab() => AppDomain.CurrentDomain.ProcessExit += (_, _) =>
    {
        foreach (var lab in s_live.Keys)
            lab.DeleteNamespacesBlocking();
    };

    private NatLab(string name, NatLabOptions options)
    {
        Name = name;
        _options = options;
    }

    /// <summary>This lab's name, <c>natlab-PID-START-N</c>: the prefix of all its namespaces.</summary>
    public string Name { get; }

    /// <summary>The relay's namespace and addresses.</summary>
    public LabRelay Relay { get; private set; } = null!;

    /// <summary>The peers, in the order given (<see cref="NatPeer.Index"/> 1, 2, ...).</summary>
    public IReadOnlyList<NatPeer> Peers => _peers;

    /// <summary>The namespace holding the public segment's bridge.</summary>
    public string InternetNamespace => _internet;

    /// <summary>Every namespace of the lab.</summary>
    public IReadOnlyList<string> Namespaces
    {
        get
        {
            lock (_namespaces)
                return [.. _namespaces];
        }
    }

    /// <summary>The bound of every wait on the lab's programs.</summary>
    public TimeSpan Timeout => _options.Timeout;

    /// <summary>A lab with one peer of type <paramref name="peer"/>.</summary>
    public static Task<NatLab> CreateAsync(NatType peer, NatLabOptions? options = null) => CreateAsync([peer], options);

    /// <summary>A lab with two peers, of types <paramref name="peer1"/> and <paramref name="peer2"/>.</summary>
    public static Task<NatLab> CreateAsync(NatType peer1, NatType peer2, NatLabOptions? options = null) => CreateAsync([peer1, peer2], options);

    /// <summary>A lab with one peer per entry of <paramref name="peers"/>; first deletes what dead test runs left behind.</summary>
    public static async Task<NatLab> CreateAsync(IReadOnlyList<NatType> peers, NatLabOptions? options = null)
    {
        await LabNamespaces.SweepStaleOnceAsync();
        var lab = new NatLab(LabNamespaces.NewLabName(), options ?? new NatLabOptions());
        s_live[lab] = true;
        try
        {
            await lab.BuildAsync(peers);
            return lab;
        }
        catch (Exception build)
        {
            try
            {
                await lab.DisposeAsync();
            }
            catch (Exception teardown)
            {
                throw new AggregateException($"Building {lab.Name} failed, and so did tearing it down.", build, teardown);
            }

            throw;
        }
    }

    /// <summary>
    /// Runs <c>ip netns exec NS dotnet &lt;program&gt;.dll args</c> (a program built next to the tests);
    /// driven through its stdin/stdout, every wait bounded by <see cref="Timeout"/>, killed when the lab is disposed.
    /// </summary>
    public ProgramProcess Start(string ns, string program, params string[] args)
    {
        var process = ProgramProcess.StartThrough([LabShell.Resolve("ip"), "netns", "exec", ns], program, _options.Timeout, args);
        Track(process);
        return process;
    }

    /// <summary>Starts the agent in <paramref name="ns"/> (<c>reflector ...</c>, <c>probe ...</c>) and waits for its <c>ready</c> line.</summary>
    public async Task<NatAgent> StartAgentAsync(string ns, params string[] args)
    {
        var agent = await NatAgent.StartAsync(ProgramProcess.StartThrough([LabShell.Resolve("ip"), "netns", "exec", ns], AgentProgram, _options.Timeout, args), ns);
        Track(agent);
        return agent;
    }

    /// <summary>A reflector in the relay's namespace on <see cref="LabRelay.Reflector"/>, <see cref="LabRelay.ReflectorOtherPort"/> and <see cref="LabRelay.ReflectorAlternate"/>.</summary>
    public Task<NatAgent> StartReflectorAsync() =>
        StartAgentAsync(Relay.Namespace, "reflector", Relay.Reflector.ToString(), Relay.ReflectorOtherPort.ToString(), Relay.ReflectorAlternate.ToString());

    /// <summary>A probe in <paramref name="peer"/>'s namespace, its UDP socket on an ephemeral port.</summary>
    public Task<NatAgent> StartProbeAsync(NatPeer peer) => StartAgentAsync(peer.Namespace, "probe", "0.0.0.0:0");

    /// <summary>Runs a command inside <paramref name="ns"/> (<c>iptables-save</c>, <c>cat /proc/net/nf_conntrack</c>...) and returns its output.</summary>
    public static Task<string> ExecAsync(string ns, params string[] command) => LabShell.RunAsync(["ip", "netns", "exec", ns, .. command]);

    public async ValueTask DisposeAsync()
    {
        if (_disposed)
            return;
        _disposed = true;

        IAsyncDisposable[] programs;
        lock (_programs)
            programs = [.. _programs];
        var failures = new List<Exception>();
        foreach (var program in programs)
        {
            try
            {
                await program.DisposeAsync();
            }
            catch (Exception e)
            {
                failures.Add(e);
            }
        }

        // Peers and routers first, the bridge last (the order they were made in, reversed).
        var namespaces = Namespaces;
        for (var i = namespaces.Count - 1; i >= 0; i--)
        {
            try
            {
                await LabNamespaces.DeleteAsync(namespaces[i]);
            }
            catch (Exception e)
            {
                failures.Add(e);
            }
        }

        s_live.TryRemove(this, out _);
        if (failures.Count > 0)
            throw new AggregateException($"Tearing down {Name} failed.", failures);
    }

    public override string ToString() => Name;

    private void Track(IAsyncDisposable program)
    {
        lock (_programs)
            _programs.Add(program);
    }

    private void DeleteNamespacesBlocking()
    {
        foreach (var ns in Namespaces)
            LabNamespaces.DeleteBlocking(ns);
    }
}
