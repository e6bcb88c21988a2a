using System;
using System.Collections.Generic;
using System.Linq;
using System.Net;
using System.Reflection;
using Xunit;

namespace NetServer.Tests.Tcp;

/// <summary>
/// The NetCoreServer-compatible surface (shared/API-NetCoreServer.md) of the TCP, TLS, Unix socket
/// and UDP types, checked by reflection against a list written out by hand: constructors, properties,
/// methods and hooks with their parameter types, return types, access and virtual-ness. Members
/// may be declared on NetServer's base classes; what counts is that they are reachable (and, for
/// virtual ones, overridable) from the public type. Each type's failures are reported together.
/// </summary>
public partial class ApiSurfaceTests
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
