using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Linq;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Reflection;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
using Xunit;

namespace NetServer.Tests.Tcp;

/// <summary>
/// The NetCoreServer-compatible surface (shared/API-NetCoreServer.md) of the TCP, TLS, Unix socket
/// and UDP types, checked by reflection against a list written out by hand: constructors, properties,
/// methods and hooks with their parameter types, return types, access and virtual-ness. Members
/// may be declared on NetServer's base classes; what counts is that they are reachable (and, for
/// virtual ones, overridable) from the public type. Each type's failures are reported together.
/// </summary>
public class ApiSurfaceTests
{
    private const BindingFlags Instance = BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic;

    private enum Access
    {
        Public,
        Protected,
    }

    private enum Virtuality
    {
        Virtual,
        NonVirtual,
        Any,
    }

    private abstract record Expectation
    {
        public abstract string? Check(Type type);
    }

    private sealed record Ctor(params Type[] Parameters) : Expectation
    {
        public override string? Check(Type type) =>
            type.GetConstructors(BindingFlags.Instance | BindingFlags.Public).Any(c => HasParameters(c, Parameters))
                ? null
                : $"missing public constructor {type.Name}({Names(Parameters)})";
    }

    private sealed record Property(string Name, Type PropertyType, bool Settable = false) : Expectation
    {
        public override string? Check(Type type)
        {
            // The most derived declaration wins (a derived type may redeclare a property with a narrower type).
            var property = type.GetProperties(BindingFlags.Instance | BindingFlags.Public)
                .Where(p => p.Name == Name)
                .OrderByDescending(p => Depth(p.DeclaringType!))
                .FirstOrDefault();
            if (property is null)
                return $"missing public property {PropertyType.Name} {Name}";
            if (property.PropertyType != PropertyType)
                return $"property {Name} is {property.PropertyType.Name}, expected {PropertyType.Name}";
            if (property.GetMethod is not { IsPublic: true })
                return $"property {Name} has no public getter";
            if (Settable && property.SetMethod is not { IsPublic: true })
                return $"property {Name} has no public setter";
            return null;
        }
    }

    private sealed record Method(string Name, Type ReturnType, Access Access, Virtuality Virtuality, params Type[] Parameters) : Expectation
    {
        public override string? Check(Type type)
        {
            var signature = $"{Access.ToString().ToLowerInvariant()} {ReturnType.Name} {Name}({Names(Parameters)})";
            // Exact parameter types: the default binder would also accept int where long is listed.
            var method = type.GetMethods(Instance)
                .Where(m => m.Name == Name && HasParameters(m, Parameters))
                .OrderByDescending(m => Depth(m.DeclaringType!))
                .FirstOrDefault();
            if (method is null)
                return "missing " + signature;
            if (method.ReturnType != ReturnType)
                return $"{signature}: returns {method.ReturnType.Name}";
            var accessible = Access == Access.Public ? method.IsPublic : method.IsFamily || method.IsFamilyOrAssembly;
            if (!accessible)
                return $"{signature}: access is {Describe(method)}";
            var overridable = method.IsVirtual && !method.IsFinal;
            if (Virtuality == Virtuality.Virtual && !overridable)
                return $"{signature}: not virtual";
            if (Virtuality == Virtuality.NonVirtual && overridable)
                return $"{signature}: virtual, expected non-virtual";
            return null;
        }
    }

    private sealed record ProtectedField(string Name, Type FieldType) : Expectation
    {
        public override string? Check(Type type)
        {
            var field = type.GetField(Name, BindingFlags.Instance | BindingFlags.NonPublic | BindingFlags.Public);
            if (field is null)
                return $"missing protected readonly field {FieldType.Name} {Name}";
            if (field.FieldType != FieldType)
                return $"field {Name} is {field.FieldType}, expected {FieldType}";
            if (!field.IsFamily || !field.IsInitOnly)
                return $"field {Name} is not protected readonly";
            return null;
        }
    }

    private static bool HasParameters(MethodBase method, Type[] expected) =>
        method.GetParameters().Select(static p => p.ParameterType).SequenceEqual(expected);

    private static int Depth(Type type)
    {
        var depth = 0;
        for (var t = type; t is not null; t = t.BaseType)
            depth++;
        return depth;
    }

    private static string Names(IEnumerable<Type> types) => string.Join(", ", types.Select(static t => t.Name));

    private static string Describe(MethodBase method) =>
        method.IsPublic ? "public" : method.IsFamily ? "protected" : method.IsAssembly ? "internal" : method.IsFamilyOrAssembly ? "protected internal" : method.IsFamilyAndAssembly ? "private protected" : "private";

    // --- Building blocks of the listing ---

    private static Method PublicVirtual(string name, Type returns, params Type[] parameters) => new(name, returns, Access.Public, Virtuality.Virtual, parameters);

    private static Method Hook(string name, params Type[] parameters) => new(name, typeof(void), Access.Protected, Virtuality.Virtual, parameters);

    /// <summary>The four endpoint constructors (the TLS types take the <see cref="SslContext"/> first).</summary>
    private static IEnumerable<Expectation> EndpointCtors(bool ssl = false)
    {
        Type[] first = ssl ? [typeof(SslContext)] : [];
        return
        [
            new Ctor([.. first, typeof(IPAddress), typeof(int)]),
            new Ctor([.. first, typeof(string), typeof(int)]),
            new Ctor([.. first, typeof(DnsEndPoint)]),
            new Ctor([.. first, typeof(IPEndPoint)]),
        ];
    }

    private static IEnumerable<Expectation> UnixCtors() =>
    [
        new Ctor(typeof(string)),
        new Ctor(typeof(UnixDomainSocketEndPoint)),
    ];

    /// <summary>The five data overloads of a public virtual method.</summary>
    private static IEnumerable<Expectation> DataOverloads(string name, Type returns) =>
    [
        PublicVirtual(name, returns, typeof(byte[])),
        PublicVirtual(name, returns, typeof(byte[]), typeof(long), typeof(long)),
        PublicVirtual(name, returns, typeof(ReadOnlySpan<byte>)),
        PublicVirtual(name, returns, typeof(string)),
        PublicVirtual(name, returns, typeof(ReadOnlySpan<char>)),
    ];

    /// <summary>What every socket type has.</summary>
    private static IEnumerable<Expectation> Disposal() =>
    [
        new Property("IsDisposed", typeof(bool)),
        new Property("IsSocketDisposed", typeof(bool)),
        new Method("Dispose", typeof(void), Access.Public, Virtuality.Any),
        Hook("Dispose", typeof(bool)),
    ];

    private static List<Expectation> Server(Type session, bool tcp, bool ssl = false)
    {
        var list = new List<Expectation>
        {
            new Property("Id", typeof(Guid)),
            new Property("Endpoint", typeof(EndPoint)),
            new Property("ConnectedSessions", typeof(long)),
            new Property("BytesPending", typeof(long)),
            new Property("BytesSent", typeof(long)),
            new Property("BytesReceived", typeof(long)),
            new Property("IsStarted", typeof(bool)),
            new Property("IsAccepting", typeof(bool)),
            new Property("OptionAcceptorBacklog", typeof(int), Settable: true),
            new Property("OptionReceiveBufferSize", typeof(int), Settable: true),
            new Property("OptionSendBufferSize", typeof(int), Settable: true),
            PublicVirtual("Start", typeof(bool)),
            PublicVirtual("Stop", typeof(bool)),
            PublicVirtual("Restart", typeof(bool)),
            PublicVirtual("DisconnectAll", typeof(bool)),
            new Method("FindSession", session, Access.Public, Virtuality.NonVirtual, typeof(Guid)),
            new Method("CreateSocket", typeof(Socket), Access.Protected, Virtuality.Virtual),
            new Method("CreateSession", session, Access.Protected, Virtuality.Virtual),
            new ProtectedField("Sessions", typeof(ConcurrentDictionary<,>).MakeGenericType(typeof(Guid), session)),
            Hook("OnStarting"),
            Hook("OnStarted"),
            Hook("OnStopping"),
            Hook("OnStopped"),
            Hook("OnConnecting", session),
            Hook("OnConnected", session),
            Hook("OnDisconnecting", session),
            Hook("OnDisconnected", session),
            Hook("OnError", typeof(SocketError)),
        };
        list.AddRange(DataOverloads("Multicast", typeof(bool)));
        list.AddRange(Disposal());
        if (ssl)
            list.AddRange([new Property("Context", typeof(SslContext)), Hook("OnHandshaking", session), Hook("OnHandshaked", session)]);
        if (tcp)
        {
            list.AddRange(EndpointCtors(ssl));
            list.AddRange(
            [
                new Property("Address", typeof(string)),
                new Property("Port", typeof(int)),
                new Property("OptionDualMode", typeof(bool), Settable: true),
                new Property("OptionKeepAlive", typeof(bool), Settable: true),
                new Property("OptionTcpKeepAliveTime", typeof(int), Settable: true),
                new Property("OptionTcpKeepAliveInterval", typeof(int), Settable: true),
                new Property("OptionTcpKeepAliveRetryCount", typeof(int), Settable: true),
                new Property("OptionNoDelay", typeof(bool), Settable: true),
                new Property("OptionReuseAddress", typeof(bool), Settable: true),
                new Property("OptionExclusiveAddressUse", typeof(bool), Settable: true),
            ]);
        }
        else
        {
            list.AddRange(UnixCtors());
        }

        return list;
    }

    /// <summary>What sessions and clients share: statistics, buffer options, I/O and hooks.</summary>
    private static List<Expectation> Connection()
    {
        var list = new List<Expectation>
        {
            new Property("Id", typeof(Guid)),
            new Property("Socket", typeof(Socket)),
            new Property("BytesPending", typeof(long)),
            new Property("BytesSending", typeof(long)),
            new Property("BytesSent", typeof(long)),
            new Property("BytesReceived", typeof(long)),
            new Property("IsConnected", typeof(bool)),
            new Property("OptionReceiveBufferLimit", typeof(int), Settable: true),
            new Property("OptionReceiveBufferSize", typeof(int), Settable: true),
            new Property("OptionSendBufferLimit", typeof(int), Settable: true),
            new Property("OptionSendBufferSize", typeof(int), Settable: true),
            PublicVirtual("Disconnect", typeof(bool)),
            PublicVirtual("Receive", typeof(long), typeof(byte[])),
            PublicVirtual("Receive", typeof(long), typeof(byte[]), typeof(long), typeof(long)),
            PublicVirtual("Receive", typeof(string), typeof(long)),
            PublicVirtual("ReceiveAsync", typeof(void)),
            Hook("OnConnecting"),
            Hook("OnConnected"),
            Hook("OnDisconnecting"),
            Hook("OnDisconnected"),
            Hook("OnReceived", typeof(byte[]), typeof(long), typeof(long)),
            Hook("OnSent", typeof(long), typeof(long)),
            Hook("OnEmpty"),
            Hook("OnError", typeof(SocketError)),
        };
        list.AddRange(DataOverloads("Send", typeof(long)));
        list.AddRange(DataOverloads("SendAsync", typeof(bool)));
        list.AddRange(Disposal());
        return list;
    }

    private static IEnumerable<Expectation> Session(Type server) =>
        Connection().Append(new Ctor(server)).Append(new Property("Server", server));

    private static IEnumerable<Expectation> SslSessionSurface() =>
        Session(typeof(SslServer)).Concat([new Property("IsHandshaked", typeof(bool)), Hook("OnHandshaking"), Hook("OnHandshaked")]);

    private static List<Expectation> Client(bool tcp, bool ssl = false)
    {
        var list = Connection().ToList();
        if (ssl)
        {
            list.AddRange(
            [
                new Property("Context", typeof(SslContext)),
                new Property("IsHandshaking", typeof(bool)),
                new Property("IsHandshaked", typeof(bool)),
                Hook("OnHandshaking"),
                Hook("OnHandshaked"),
            ]);
        }

        list.AddRange(
        [
            new Property("Endpoint", typeof(EndPoint)),
            new Property("IsConnecting", typeof(bool)),
            PublicVirtual("Connect", typeof(bool)),
            PublicVirtual("ConnectAsync", typeof(bool)),
            PublicVirtual("DisconnectAsync", typeof(bool)),
            PublicVirtual("Reconnect", typeof(bool)),
            PublicVirtual("ReconnectAsync", typeof(bool)),
            new Method("CreateSocket", typeof(Socket), Access.Protected, Virtuality.Virtual),
        ]);
        if (tcp)
        {
            list.AddRange(EndpointCtors(ssl));
            list.AddRange(
            [
                new Property("Address", typeof(string)),
                new Property("Port", typeof(int)),
                new Property("OptionDualMode", typeof(bool), Settable: true),
                new Property("OptionKeepAlive", typeof(bool), Settable: true),
                new Property("OptionTcpKeepAliveTime", typeof(int), Settable: true),
                new Property("OptionTcpKeepAliveInterval", typeof(int), Settable: true),
                new Property("OptionTcpKeepAliveRetryCount", typeof(int), Settable: true),
                new Property("OptionNoDelay", typeof(bool), Settable: true),
            ]);
        }
        else
        {
            list.AddRange(UnixCtors());
        }

        return list;
    }

    /// <summary>The five data overloads of a public virtual method, after a leading endpoint (UDP).</summary>
    private static IEnumerable<Expectation> EndpointDataOverloads(string name, Type returns) =>
        DataOverloads(name, returns).Cast<Method>().Select(m => m with { Parameters = [typeof(EndPoint), .. m.Parameters] });

    /// <summary>What the UDP server and client share: statistics, options, datagram I/O and hooks.</summary>
    private static List<Expectation> Udp()
    {
        var endpointRef = typeof(EndPoint).MakeByRefType();
        var list = new List<Expectation>
        {
            new Property("Id", typeof(Guid)),
            new Property("Address", typeof(string)),
            new Property("Port", typeof(int)),
            new Property("Endpoint", typeof(EndPoint)),
            new Property("Socket", typeof(Socket)),
            new Property("BytesPending", typeof(long)),
            new Property("BytesSending", typeof(long)),
            new Property("BytesSent", typeof(long)),
            new Property("BytesReceived", typeof(long)),
            new Property("DatagramsSent", typeof(long)),
            new Property("DatagramsReceived", typeof(long)),
            new Property("OptionDualMode", typeof(bool), Settable: true),
            new Property("OptionReuseAddress", typeof(bool), Settable: true),
            new Property("OptionExclusiveAddressUse", typeof(bool), Settable: true),
            new Property("OptionReceiveBufferLimit", typeof(int), Settable: true),
            new Property("OptionReceiveBufferSize", typeof(int), Settable: true),
            new Property("OptionSendBufferLimit", typeof(int), Settable: true),
            new Property("OptionSendBufferSize", typeof(int), Settable: true),
            PublicVirtual("Receive", typeof(long), endpointRef, typeof(byte[])),
            PublicVirtual("Receive", typeof(long), endpointRef, typeof(byte[]), typeof(long), typeof(long)),
            PublicVirtual("Receive", typeof(string), endpointRef, typeof(long)),
            PublicVirtual("ReceiveAsync", typeof(void)),
            Hook("OnReceived", typeof(EndPoint), typeof(byte[]), typeof(long), typeof(long)),
            Hook("OnSent", typeof(EndPoint), typeof(long)),
            Hook("OnError", typeof(SocketError)),
        };
        list.AddRange(EndpointCtors());
        list.AddRange(EndpointDataOverloads("Send", typeof(long)));
        list.AddRange(EndpointDataOverloads("SendAsync", typeof(bool)));
        list.AddRange(Disposal());
        return list;
    }

    private static IEnumerable<Expectation> UdpServerSurface() =>
        Udp().Concat(
        [
            new Property("MulticastEndpoint", typeof(EndPoint)),
            new Property("IsStarted", typeof(bool)),
            PublicVirtual("Start", typeof(bool)),
            PublicVirtual("Start", typeof(bool), typeof(IPAddress), typeof(int)),
            PublicVirtual("Start", typeof(bool), typeof(string), typeof(int)),
            PublicVirtual("Start", typeof(bool), typeof(EndPoint)),
            PublicVirtual("Stop", typeof(bool)),
            PublicVirtual("Restart", typeof(bool)),
            Hook("OnStarting"),
            Hook("OnStarted"),
            Hook("OnStopping"),
            Hook("OnStopped"),
            .. DataOverloads("Multicast", typeof(long)),
            .. DataOverloads("MulticastAsync", typeof(bool)),
        ]);

    private static IEnumerable<Expectation> UdpClientSurface() =>
        Udp().Concat(
        [
            new Property("OptionMulticast", typeof(bool), Settable: true),
            new Property("IsConnected", typeof(bool)),
            PublicVirtual("Connect", typeof(bool)),
            PublicVirtual("Disconnect", typeof(bool)),
            PublicVirtual("Reconnect", typeof(bool)),
            PublicVirtual("SetupMulticast", typeof(void), typeof(bool)),
            PublicVirtual("JoinMulticastGroup", typeof(void), typeof(IPAddress)),
            PublicVirtual("JoinMulticastGroup", typeof(void), typeof(string)),
            PublicVirtual("LeaveMulticastGroup", typeof(void), typeof(IPAddress)),
            PublicVirtual("LeaveMulticastGroup", typeof(void), typeof(string)),
            Hook("OnConnecting"),
            Hook("OnConnected"),
            Hook("OnDisconnecting"),
            Hook("OnDisconnected"),
            Hook("OnJoinedMulticastGroup", typeof(IPAddress)),
            Hook("OnLeftMulticastGroup", typeof(IPAddress)),
            .. DataOverloads("Send", typeof(long)),
            .. DataOverloads("SendAsync", typeof(bool)),
        ]);

    private static readonly Dictionary<string, (Type Type, Func<IEnumerable<Expectation>> Expected)> s_surface = new()
    {
        ["UdpServer"] = (typeof(UdpServer), UdpServerSurface),
        ["UdpClient"] = (typeof(UdpClient), UdpClientSurface),
        ["TcpServer"] = (typeof(TcpServer), () => Server(typeof(TcpSession), tcp: true)),
        ["UdsServer"] = (typeof(UdsServer), () => Server(typeof(UdsSession), tcp: false)),
        ["TcpSession"] = (typeof(TcpSession), () => Session(typeof(TcpServer))),
        ["UdsSession"] = (typeof(UdsSession), () => Session(typeof(UdsServer))),
        ["TcpClient"] = (typeof(TcpClient), () => Client(tcp: true)),
        ["UdsClient"] = (typeof(UdsClient), () => Client(tcp: false)),
        ["SslServer"] = (typeof(SslServer), () => Server(typeof(SslSession), tcp: true, ssl: true)),
        ["SslSession"] = (typeof(SslSession), SslSessionSurface),
        ["SslClient"] = (typeof(SslClient), () => Client(tcp: true, ssl: true)),
        ["SslContext"] = (typeof(SslContext), SslContextSurface),
    };

    /// <summary>SslContext: seven constructors and five settable properties, nothing virtual.</summary>
    private static IEnumerable<Expectation> SslContextSurface() =>
    [
        new Ctor(),
        new Ctor(typeof(SslProtocols)),
        new Ctor(typeof(SslProtocols), typeof(RemoteCertificateValidationCallback)),
        new Ctor(typeof(SslProtocols), typeof(X509Certificate)),
        new Ctor(typeof(SslProtocols), typeof(X509Certificate), typeof(RemoteCertificateValidationCallback)),
        new Ctor(typeof(SslProtocols), typeof(X509Certificate2Collection)),
        new Ctor(typeof(SslProtocols), typeof(X509Certificate2Collection), typeof(RemoteCertificateValidationCallback)),
        new Property("Protocols", typeof(SslProtocols), Settable: true),
        new Property("Certificate", typeof(X509Certificate), Settable: true),
        new Property("Certificates", typeof(X509Certificate2Collection), Settable: true),
        new Property("CertificateValidationCallback", typeof(RemoteCertificateValidationCallback), Settable: true),
        new Property("ClientCertificateRequired", typeof(bool), Settable: true),
    ];

    public static TheoryData<string> Types => new(s_surface.Keys);

    [Theory]
    [MemberData(nameof(Types))]
    public void Type_has_the_NetCoreServer_compatible_surface(string name)
    {
        var (type, expected) = s_surface[name];
        Assert.True(type.IsPublic && type.IsClass && !type.IsAbstract && !type.IsSealed, $"{name} must be a public, non-abstract, non-sealed class.");
        Assert.Equal("NetServer", type.Namespace);

        var failures = expected().Select(e => e.Check(type)).OfType<string>().ToList();
        Assert.True(failures.Count == 0, $"{name}: {failures.Count} difference(s) from the NetCoreServer surface:{Environment.NewLine}  " + string.Join(Environment.NewLine + "  ", failures));
    }

    [Fact]
    public void Option_defaults_match_NetCoreServer()
    {
        // The backlog is the one documented difference (docs/migration.md): 4096, not 1024, so a
        // connect storm overflows the kernel's queue less often.
        using var tcp = new TcpServer(IPAddress.Loopback, 0);
        Assert.Equal(4096, tcp.OptionAcceptorBacklog);
        Assert.Equal(8192, tcp.OptionReceiveBufferSize);
        Assert.Equal(8192, tcp.OptionSendBufferSize);
        Assert.Equal(-1, tcp.OptionTcpKeepAliveTime);
        Assert.Equal(-1, tcp.OptionTcpKeepAliveInterval);
        Assert.Equal(-1, tcp.OptionTcpKeepAliveRetryCount);
        Assert.False(tcp.OptionKeepAlive);
        Assert.False(tcp.OptionNoDelay);

        using var uds = new UdsServer("/tmp/netserver-defaults-never-bound.sock");
        Assert.Equal(4096, uds.OptionAcceptorBacklog);
        Assert.Equal(8192, uds.OptionReceiveBufferSize);
        Assert.Equal(8192, uds.OptionSendBufferSize);

        using var session = new TcpSession(tcp);
        Assert.Equal(0, session.OptionReceiveBufferLimit);
        Assert.Equal(8192, session.OptionReceiveBufferSize);
        Assert.Equal(8192, session.OptionSendBufferSize);

        using var udpServer = new UdpServer(IPAddress.Loopback, 0);
        Assert.Equal(8192, udpServer.OptionReceiveBufferSize);
        Assert.Equal(8192, udpServer.OptionSendBufferSize);
        Assert.False(udpServer.OptionAutoReceive); // each ReceiveAsync() asks for one datagram, as in NetCoreServer
        using var udpClient = new UdpClient(IPAddress.Loopback, 1);
        Assert.False(udpClient.OptionMulticast);
        udpClient.SetupMulticast(true);
        Assert.True(udpClient.OptionMulticast && udpClient.OptionReuseAddress);

        using var client = new TcpClient(IPAddress.Loopback, 1);
        Assert.Equal(8192, client.OptionReceiveBufferSize);
        Assert.Equal(8192, client.OptionSendBufferSize);
        Assert.Equal(-1, client.OptionTcpKeepAliveTime);
        Assert.Equal(-1, client.OptionTcpKeepAliveInterval);
        Assert.Equal(-1, client.OptionTcpKeepAliveRetryCount);
        Assert.Equal("127.0.0.1", client.Address);
        Assert.Equal(1, client.Port);
        Assert.False(client.IsConnected);
        Assert.False(client.IsConnecting);
    }
}
