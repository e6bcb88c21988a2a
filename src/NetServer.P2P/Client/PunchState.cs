using System.Collections.Generic;
using System.Net;
using System.Threading;
using System.Threading.Tasks;

namespace NetServer.P2P.Client;

/// <summary>One punch with one peer: the endpoints to punch (candidates, peer-reflexive ones added as they are heard), the first acknowledged endpoint, a stop.</summary>
internal sealed class PunchState
{
    private readonly List<IPEndPoint> _candidates = [];

    public PunchState(IEnumerable<IPEndPoint> candidates)
    {
        foreach (var candidate in candidates)
            Add(candidate);
    }

    public TaskCompletionSource<IPEndPoint> Acknowledged { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

    public CancellationTokenSource Stop { get; } = new();

    /// <summary>The endpoint the last authenticated PUNCH or PUNCH_ACK came from (the path a nomination takes when this side saw no acknowledgement of its own).</summary>
    public IPEndPoint? LastHeard { get; set; }

    /// <summary>Adds an endpoint (a candidate, or one an authenticated punch came from); false if known.</summary>
    public bool Add(IPEndPoint endpoint)
    {
        lock (_candidates)
        {
            if (_candidates.Contains(endpoint))
                return false;
            _candidates.Add(endpoint);
            return true;
        }
    }

    public IPEndPoint[] Snapshot()
    {
        lock (_candidates)
            return _candidates.ToArray();
    }
}
