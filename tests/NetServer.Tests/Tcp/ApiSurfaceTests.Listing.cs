using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Linq;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;

namespace NetServer.Tests.Tcp;

/// <summary>The expected surface, written out by hand: building blocks and one listing per type.</summary>
public partial class ApiSurfaceTests
{
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
}
