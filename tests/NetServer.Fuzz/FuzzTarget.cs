using System;
using System.Collections.Generic;
using System.Linq;

namespace NetServer.Fuzz;

/// <summary>One parser under test: a name (build/fuzz.sh NAME) and a run over one input that throws <see cref="InvariantException"/> when the parser broke a rule.</summary>
public sealed record FuzzTarget(string Name, string Describes, FuzzTarget.Body Run)
{
    /// <summary>Runs the parser over one input and checks its invariants.</summary>
    public delegate void Body(ReadOnlySpan<byte> input);

    /// <summary>Every target, by name.</summary>
    public static IReadOnlyList<FuzzTarget> All { get; } =
    [
        new("http-request", "HTTP request head (request line, fields, framing, limits)", HttpTargets.RequestHead),
        new("http-response", "HTTP client's response head parser", HttpTargets.ResponseHead),
        new("http-body", "HTTP body framing: chunked (sizes, extensions, trailers) and Content-Length, with a body limit", HttpTargets.Body),
        new("ws-frame", "WebSocket frame headers, read and written back", WebSocketTargets.FrameHeaders),
        new("ws-utf8", "WebSocket's incremental UTF-8 validator against .NET's strict decoder", WebSocketTargets.Utf8),
        new("ws-inflate", "permessage-deflate inflation with its message size bound", WebSocketTargets.Inflate),
        new("msg-framing", "length-prefixed byte-message framing with reassembly past the retention limit", MessageTargets.Framing),
        new("proto-envelope", "the protobuf envelope codec: parse, rebuild, write, parse again", MessageTargets.Envelope),
        new("static-path", "static content: request-target path normalization and Range parsing", StaticTargets.PathAndRange),
        new("sudp-datagram", "secure UDP: arbitrary and tampered datagrams never open nor move the replay window", SecureUdpTargets.Datagram),
        new("relay-envelope", "the relay's From rewrite of every routed envelope", RelayTargets.Envelope),
        new("relay-control", "the relay's control messages (register, room, UDP pair, punch offer) and UDP endpoints", RelayTargets.Control),
    ];

    public static FuzzTarget? Find(string name) => All.FirstOrDefault(t => t.Name == name);
}

/// <summary>A parser broke one of its rules: the fuzzer counts it as a crash, a replay test fails.</summary>
public sealed class InvariantException(string message) : Exception(message);

/// <summary>The checks the targets share.</summary>
internal static class Invariant
{
    public static void Check(bool condition, string rule)
    {
        if (!condition)
            throw new InvariantException(rule);
    }

    public static void Equal<T>(T expected, T actual, string what)
    {
        if (!EqualityComparer<T>.Default.Equals(expected, actual))
            throw new InvariantException($"{what}: {expected} fed whole, {actual} fed in pieces");
    }
}

/// <summary>
/// Ways to cut an input into the pieces a connection would deliver: whole, a byte at a time, and
/// cuts drawn from a generator seeded by the input itself (so a run is repeatable, as AFL needs).
/// </summary>
internal static class Cuts
{
    public static IEnumerable<int[]> Of(ReadOnlySpan<byte> input)
    {
        var length = input.Length;
        var seed = 17;
        foreach (var b in input)
            seed = unchecked((seed * 31) + b);
        var random = new Random(seed);
        var cuts = new List<int>();
        for (var left = length; left > 0;)
        {
            var piece = Math.Min(left, random.Next(4) == 0 ? random.Next(1, 300) : random.Next(1, 9));
            cuts.Add(piece);
            left -= piece;
        }

        return [[length], Enumerable.Repeat(1, length).ToArray(), cuts.ToArray()];
    }
}
