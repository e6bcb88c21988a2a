using System.Diagnostics;
using System.Collections.Generic;

namespace NetServer.Diagnostics;

/// <summary>
/// The semantic-convention tags of a server (or of the server a client connects to), worked out
/// once per start from its endpoint: network.transport, network.type, server.address, server.port.
/// </summary>
internal sealed class EndpointTags
{
    private readonly string _transport;
    private readonly string? _type;
    private readonly string? _address;
    private readonly object? _port; // boxed once here, not per measurement

    private EndpointTags(string transport, string? type, string? address, object? port)
    {
        _transport = transport;
        _type = type;
        _address = address;
        _port = port;
    }

    /// <summary>The tags of <paramref name="endpoint"/> over <paramref name="datagrams"/> (udp) or a stream socket (tcp, or unix for a Unix domain endpoint).</summary>
    public static EndpointTags For(EndPoint endpoint, bool datagrams)
    {
        switch (endpoint)
        {
            case IPEndPoint ip:
                return new EndpointTags(datagrams ? "udp" : "tcp",
                    ip.AddressFamily == AddressFamily.InterNetworkV6 ? "ipv6" : "ipv4", ip.Address.ToString(), ip.Port);
            case DnsEndPoint dns:
                return new EndpointTags(datagrams ? "udp" : "tcp", null, dns.Host, dns.Port);
            default:
                return endpoint.AddressFamily == AddressFamily.Unix
                    ? new EndpointTags("unix", null, endpoint.ToString(), null)
                    : new EndpointTags(datagrams ? "udp" : "tcp", null, endpoint.ToString(), null);
        }
    }

    /// <summary>Adds these tags to <paramref name="tags"/>.</summary>
    public void AddTo(ref TagList tags)
    {
        tags.Add("network.transport", _transport);
        if (_type is not null)
            tags.Add("network.type", _type);
        if (_address is not null)
            tags.Add("server.address", _address);
        if (_port is not null)
            tags.Add("server.port", _port);
    }

    /// <summary>These tags as a new array (observable instruments, at collection time only).</summary>
    public KeyValuePair<string, object?>[] ToArray()
    {
        var tags = new TagList();
        AddTo(ref tags);
        var array = new KeyValuePair<string, object?>[tags.Count];
        tags.CopyTo(array);
        return array;
    }

    /// <summary>These tags and one more, as a new array (observable instruments, at collection time only).</summary>
    public KeyValuePair<string, object?>[] With(string key, object value)
    {
        var tags = new TagList();
        AddTo(ref tags);
        tags.Add(key, value);
        var array = new KeyValuePair<string, object?>[tags.Count];
        tags.CopyTo(array);
        return array;
    }
}
