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

    private IPEndPoint? _acknowledgedBy;

    public TaskCompletionSource<IPEndPoint> Acknowledged { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

    /// <summary>The first PUNCH_ACK's source completes <see cref="Acknowledged"/>; later ones change nothing.</summary>
    public void Acknowledge(IPEndPoint from)
    {
        if (Interlocked.CompareExchange(ref _acknowledgedBy, from, null) is null)
            Acknowledged.TrySetResult(from);
    }

    /// <summary>Where a nomination sends this side: the endpoint that acknowledged its own PUNCH, else the one last heard.</summary>
    public IPEndPoint? NominatedEndpoint => Volatile.Read(ref _acknowledgedBy) ?? LastHeard;

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

    /// <summary>Peer-reflexive endpoints one punch adds at most (an authenticated PUNCH from an endpoint not offered).</summary>
    public const int MaxPeerReflexive = 4;

    /// <summary>PUNCH datagrams one punch sends at most (candidates times rounds, peer-reflexive answers included).</summary>
    public const int MaxPunches = 64;

    private int _peerReflexive;
    private int _punches;

    /// <summary>Adds the endpoint an authenticated PUNCH came from: only while this punch runs, at most <see cref="MaxPeerReflexive"/>; false otherwise or if known.</summary>
    public bool AddPeerReflexive(IPEndPoint endpoint)
    {
        lock (_candidates)
        {
            if (Stop.IsCancellationRequested || _peerReflexive >= MaxPeerReflexive || _candidates.Contains(endpoint))
                return false;
            _peerReflexive++;
            _candidates.Add(endpoint);
            return true;
        }
    }

    /// <summary>Counts one PUNCH about to be sent; false once <see cref="MaxPunches"/> have been.</summary>
    public bool TryCountPunch() => Interlocked.Increment(ref _punches) <= MaxPunches;

    /// <summary>
    /// False for an endpoint no punch should go to: port 0, the unspecified address, multicast,
    /// broadcast, IPv6 link-local, site-local (fec0::/10, deprecated by RFC 3879) and
    /// IPv4-compatible (::/96, deprecated by RFC 4291), NAT64 (64:ff9b::/96) of a non-global IPv4
    /// address, and loopback unless <paramref name="allowLoopback"/> (the relay itself is on loopback).
    /// Both the candidates a client offers and those it takes from its peer go through it.
    /// </summary>
    public static bool IsPunchable(IPEndPoint endpoint, bool allowLoopback)
    {
        if (endpoint.Port == 0)
            return false;
        var address = Internal.IpAddresses.Unmap(endpoint.Address);
        // An IPv6 link-local address's zone (which interface) is not on the wire: no socket could send to it.
        // Site-local and IPv4-compatible addresses are routed nowhere now, and a NAT64 gateway does not
        // translate a private IPv4 address (RFC 6052): each would only cost a punch round.
        if (address.Equals(IPAddress.Any) || address.Equals(IPAddress.IPv6Any) || address.Equals(IPAddress.Broadcast) || address.Equals(IPAddress.IPv6None)
            || address.IsIPv6Multicast || address.IsIPv6LinkLocal || address.IsIPv6SiteLocal
            || Internal.IpAddresses.IsIPv4Compatible(address) || Internal.IpAddresses.IsNat64OfNonGlobal(address))
            return false;
        if (address.AddressFamily == System.Net.Sockets.AddressFamily.InterNetwork)
        {
            var first = address.GetAddressBytes()[0];
            if (first == 0 || first is >= 224 and <= 239)
                return false;
        }

        return allowLoopback || !IPAddress.IsLoopback(address);
    }

    public IPEndPoint[] Snapshot()
    {
        lock (_candidates)
            return _candidates.ToArray();
    }
}
