using System;
using System.Collections.Generic;
using System.Net;

namespace NetServer.P2P.Tests.Nat;

/// <summary>One line of the agent's output: a verb and <c>key=value</c> fields (an <c>error</c> line has free text instead).</summary>
internal sealed class AgentReply
{
    private readonly Dictionary<string, string> _fields = new(StringComparer.Ordinal);

    private AgentReply(string line)
    {
        Line = line;
        var words = line.Split(' ', StringSplitOptions.RemoveEmptyEntries);
        Verb = words.Length > 0 ? words[0] : "";
        if (Verb == "error")
            return;
        foreach (var word in words[1..])
        {
            var equals = word.IndexOf('=', StringComparison.Ordinal);
            if (equals > 0)
                _fields[word[..equals]] = word[(equals + 1)..];
        }
    }

    public string Verb { get; }

    public string Line { get; }

    public bool IsError => Verb == "error";

    /// <summary>The field <paramref name="key"/>; fails with the whole line when it is missing.</summary>
    public string this[string key] => _fields.TryGetValue(key, out var value)
        ? value
        : throw new KeyNotFoundException($"No field '{key}' in the agent's line \"{Line}\".");

    public static AgentReply Parse(string line) => new(line);

    public bool Has(string key) => _fields.ContainsKey(key);

    /// <summary>The field <paramref name="key"/> as an endpoint (<c>203.0.113.11:40000</c>).</summary>
    public IPEndPoint Endpoint(string key) => IPEndPoint.Parse(this[key]);

    public override string ToString() => Line;
}
