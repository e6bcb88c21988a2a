using System;
using System.Collections.Concurrent;
using System.Linq;
using System.Net;
using System.Net.NetworkInformation;
using System.Net.Sockets;
using NetServer.Buffers;
using Xunit;

namespace NetServer.Tests.Udp;

/// <summary>The ways a multicast datagram can loop back to a listener on this host.</summary>
public enum MulticastPath
{
    /// <summary>IPv4 239.255.x.y through the loopback interface: never leaves the host.</summary>
    IPv4Loopback,

    /// <summary>IPv4 239.255.x.y through the interface the routing table picks (interface 0), TTL 0.</summary>
    IPv4Routed,

    /// <summary>IPv6 site-local ff15:: through the interface that has the IPv6 multicast route, hop limit 0.</summary>
    IPv6Routed,

    /// <summary>IPv6 link-local ff02:: (with the interface as scope id) on that interface, hop limit 0.</summary>
    IPv6LinkLocal,
}

/// <summary>
/// How multicast loops back on one <see cref="MulticastPath"/> of this machine, probed once with
/// plain sockets (not NetServer's, so a bug under test cannot turn into a skip). Off the loopback
/// interface every datagram is sent with a time to live of 0: the kernel delivers it to this
/// host's listeners and drops it before the wire, so no test traffic leaves the machine (only the
/// kernel's group membership reports do, when a group is joined there).
/// </summary>
internal sealed class MulticastRoute
{
    private static readonly ConcurrentDictionary<MulticastPath, Lazy<MulticastRoute>> s_routes = new();

    private MulticastRoute(MulticastPath path) => Path = path;

    public MulticastPath Path { get; }

    public AddressFamily Family => Path is MulticastPath.IPv4Loopback or MulticastPath.IPv4Routed ? AddressFamily.InterNetwork : AddressFamily.InterNetworkV6;

    /// <summary>What the sending server binds to: an address of the interface the datagrams go through.</summary>
    public IPAddress SenderAddress { get; private set; } = IPAddress.None;

    /// <summary>The interface's index for <see cref="UdpPeer.OptionMulticastInterface"/> (0: the system chooses).</summary>
    public int InterfaceIndex { get; private set; }

    /// <summary>The index of the interface the datagrams really go through.</summary>
    public int ActualInterfaceIndex { get; private set; }

    public string InterfaceName { get; private set; } = "?";

    /// <summary>
    /// True on the loopback interface, where Linux delivers a multicast datagram to this host's
    /// listeners whatever IP_MULTICAST_LOOP says (the interface itself loops everything back).
    /// </summary>
    public bool IsLoopbackInterface => Path == MulticastPath.IPv4Loopback;

    /// <summary>Why this path cannot be tested here; null when it can.</summary>
    public string? SkipReason { get; private set; }

    public static MulticastRoute Get(MulticastPath path) =>
        s_routes.GetOrAdd(path, p => new Lazy<MulticastRoute>(() => Detect(p))).Value;

    /// <summary>A random group of this path's kind, so tests running side by side never share one.</summary>
    public IPAddress NewGroup()
    {
        var random = Random.Shared;
        switch (Path)
        {
            case MulticastPath.IPv4Loopback:
            case MulticastPath.IPv4Routed:
                return new IPAddress(new byte[] { 239, 255, (byte)random.Next(1, 255), (byte)random.Next(1, 255) });
            default:
                var bytes = new byte[16];
                random.NextBytes(bytes);
                bytes[0] = 0xff;
                bytes[1] = Path == MulticastPath.IPv6LinkLocal ? (byte)0x02 : (byte)0x15;
                for (var i = 2; i < 10; i++)
                    bytes[i] = 0;
                return Path == MulticastPath.IPv6LinkLocal ? new IPAddress(bytes, ActualInterfaceIndex) : new IPAddress(bytes);
        }
    }

    /// <summary>A server in <paramref name="io"/> that multicasts on this path (bound to <see cref="SenderAddress"/> port 0, TTL 0, the path's interface).</summary>
    public ProbeUdpServer Sender(BufferPool pool, UdpIo io, UdpProbe? probe = null, IPAddress? address = null) =>
        new(new IPEndPoint(address ?? SenderAddress, 0), pool, probe)
        {
            Io = io,
            OptionMulticastTimeToLive = 0,
            OptionMulticastInterface = InterfaceIndex,
        };

    /// <summary>A multicast client in <paramref name="io"/> listening on <paramref name="group"/>:<paramref name="port"/> (port 0: any), joining on this path's interface.</summary>
    public ProbeUdpClient Listener(IPAddress group, int port, BufferPool pool, UdpIo io, UdpProbe? probe = null)
    {
        var client = new ProbeUdpClient(new IPEndPoint(group, port), pool, probe)
        {
            Io = io,
            OptionMulticastInterface = InterfaceIndex,
            OptionReceiveBufferSize = 1024 * 1024,
        };
        client.SetupMulticast(true);
        return client;
    }

    private static MulticastRoute Detect(MulticastPath path)
    {
        var route = new MulticastRoute(path);
        try
        {
            route.SkipReason = route.Find() ?? route.LoopsBack();
        }
        catch (SocketException e)
        {
            route.SkipReason = $"{path} multicast cannot be tested on this machine: {e.SocketErrorCode} ({e.Message}) while probing it.";
        }

        return route;
    }

    /// <summary>Finds the sender address and interface; returns why not if there is none.</summary>
    private string? Find()
    {
        var interfaces = NetworkInterface.GetAllNetworkInterfaces().Where(n => n.OperationalStatus == OperationalStatus.Up || n.NetworkInterfaceType == NetworkInterfaceType.Loopback).ToArray();
        if (Path == MulticastPath.IPv4Loopback)
        {
            var loopback = interfaces.FirstOrDefault(n => n.NetworkInterfaceType == NetworkInterfaceType.Loopback && n.Supports(NetworkInterfaceComponent.IPv4));
            if (loopback is null)
                return "IPv4 multicast on the loopback interface cannot be tested: there is no loopback interface with IPv4.";
            SenderAddress = IPAddress.Loopback;
            InterfaceIndex = ActualInterfaceIndex = loopback.GetIPProperties().GetIPv4Properties().Index;
            InterfaceName = loopback.Name;
            return null;
        }

        // Connecting a UDP socket sends nothing: it asks the routing table which source address
        // (so which interface) a datagram to the group would use.
        var probeGroup = Family == AddressFamily.InterNetwork ? IPAddress.Parse("239.255.0.1") : IPAddress.Parse("ff15::1");
        using (var socket = new Socket(Family, SocketType.Dgram, ProtocolType.Udp))
        {
            try
            {
                socket.Connect(new IPEndPoint(probeGroup, 9));
            }
            catch (SocketException e)
            {
                return $"{Path} multicast cannot be tested: this machine has no route for {probeGroup} ({e.SocketErrorCode}).";
            }

            SenderAddress = ((IPEndPoint)socket.LocalEndPoint!).Address;
        }

        var owner = interfaces.FirstOrDefault(n => n.GetIPProperties().UnicastAddresses.Any(a => a.Address.Equals(SenderAddress)));
        if (owner is null)
            return $"{Path} multicast cannot be tested: no interface owns the source address {SenderAddress} the route gives.";
        if (owner.NetworkInterfaceType == NetworkInterfaceType.Loopback || IPAddress.IsLoopback(SenderAddress))
            return $"{Path} multicast cannot be tested: the multicast route goes through the loopback interface (see {MulticastPath.IPv4Loopback}).";
        InterfaceName = owner.Name;
        ActualInterfaceIndex = Family == AddressFamily.InterNetwork
            ? owner.GetIPProperties().GetIPv4Properties().Index
            : owner.GetIPProperties().GetIPv6Properties().Index;
        InterfaceIndex = Path == MulticastPath.IPv4Routed ? 0 : ActualInterfaceIndex;
        return null;
    }

    /// <summary>Sends one datagram with TTL 0 to a fresh group and checks it loops back to a joined listener; returns why not if it does not.</summary>
    private string? LoopsBack()
    {
        var group = NewGroup();
        using var listener = new Socket(Family, SocketType.Dgram, ProtocolType.Udp);
        listener.SetSocketOption(SocketOptionLevel.Socket, SocketOptionName.ReuseAddress, true);
        listener.Bind(new IPEndPoint(group, 0));
        var level = Family == AddressFamily.InterNetwork ? SocketOptionLevel.IP : SocketOptionLevel.IPv6;
        if (Family == AddressFamily.InterNetwork)
            listener.SetSocketOption(level, SocketOptionName.AddMembership, new MulticastOption(group, InterfaceIndex));
        else
            listener.SetSocketOption(level, SocketOptionName.AddMembership, new IPv6MulticastOption(group, InterfaceIndex));

        using var sender = new Socket(Family, SocketType.Dgram, ProtocolType.Udp);
        sender.Bind(new IPEndPoint(SenderAddress, 0));
        sender.SetSocketOption(level, SocketOptionName.MulticastTimeToLive, 0);
        sender.SendTo(new byte[] { 42 }, new IPEndPoint(group, ((IPEndPoint)listener.LocalEndPoint!).Port));
        if (listener.Poll(1_000_000, SelectMode.SelectRead))
            return null;
        return $"{Path} multicast cannot be tested: a datagram from {SenderAddress} to {group} via {InterfaceName} (index {ActualInterfaceIndex}) did not loop back to a listener on this machine within 1 s.";
    }
}

/// <summary>A fact that runs only where multicast on <see cref="Path"/> loops back on this machine; elsewhere it is skipped with the reason.</summary>
[AttributeUsage(AttributeTargets.Method, AllowMultiple = false)]
public sealed class MulticastFactAttribute : FactAttribute
{
    public MulticastFactAttribute(MulticastPath path)
    {
        Path = path;
        if (MulticastRoute.Get(path).SkipReason is { } reason)
            Skip = reason;
    }

    public MulticastPath Path { get; }
}

/// <summary>A theory that runs only where multicast on <see cref="Path"/> loops back on this machine; elsewhere it is skipped with the reason.</summary>
[AttributeUsage(AttributeTargets.Method, AllowMultiple = false)]
public sealed class MulticastTheoryAttribute : TheoryAttribute
{
    public MulticastTheoryAttribute(MulticastPath path)
    {
        Path = path;
        if (MulticastRoute.Get(path).SkipReason is { } reason)
            Skip = reason;
    }

    public MulticastPath Path { get; }
}
