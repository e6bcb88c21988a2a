using Xunit;

namespace NetServer.P2P.Tests.Nat;

/// <summary>
/// A fact that builds a <see cref="NatLab"/>: skipped with the reason where the lab cannot run
/// (not Linux, not root, ip/iptables missing, no network namespaces); on the project's machines and
/// CI (root, tools from build/install-tools.sh) it runs.
/// </summary>
public sealed class NatLabFactAttribute : FactAttribute
{
    private bool _requiresNetem;
    private bool _benchmark;

    public NatLabFactAttribute()
    {
        if (NatLabSupport.Failure is { } failure)
            Skip = failure;
    }

    /// <summary>Also skip where the kernel has no <c>tc netem</c> (the latency knob).</summary>
    public bool RequiresNetem
    {
        get => _requiresNetem;
        set
        {
            _requiresNetem = value;
            if (value && NatLabSupport.NetemFailure is { } failure)
                Skip = failure;
        }
    }

    /// <summary>
    /// A benchmark, not a test: also skip unless <see cref="NatTimeToPathBenchmark.TriesVariable"/>
    /// is set (build/bench-nat.sh sets it), so a test run (<c>.ci/run</c>) does not spend minutes on it.
    /// </summary>
    public bool Benchmark
    {
        get => _benchmark;
        set
        {
            _benchmark = value;
            if (value && Skip is null && NatTimeToPathBenchmark.Tries is null)
                Skip = $"A benchmark: runs when {NatTimeToPathBenchmark.TriesVariable} is set (build/bench-nat.sh).";
        }
    }
}
