using System.Collections.Generic;

namespace NetServer.Messaging;

/// <summary>
/// The transport server behind a protocol server (<see cref="MessageServer"/>): a TCP, TLS or
/// Unix-socket server whose every session hosts a protocol object made by the owner. Written once
/// per transport as a few lines (<see cref="ProtocolHosts"/>); the protocol logic lives in the protocol.
/// </summary>
internal interface IProtocolHost : IDisposable
{
    EndPoint Endpoint { get; }

    bool IsStarted { get; }

    long ConnectedSessions { get; }

    long BytesSent { get; }

    long BytesReceived { get; }

    long RejectedSessions { get; }

    int OptionMaxSessions { get; set; }

    int OptionAcceptorBacklog { get; set; }

    bool Start();

    bool Stop();

    Task<bool> StopAsync();

    Diagnostics.NetServerEventListener? EventListener { get; set; }

    bool Restart();

    bool DisconnectAll();

    bool Multicast(ReadOnlySpan<byte> buffer);

    ValueTask<bool> MulticastAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken);

    /// <summary>TCP_NODELAY on accepted connections (TCP and TLS; a Unix socket has no Nagle delay).</summary>
    bool OptionNoDelay { get; set; }

    /// <summary>The stream server's PROXY protocol options (see <c>StreamServer.OptionProxyProtocol</c>).</summary>
    ProxyProtocolMode OptionProxyProtocol { get; set; }

    IList<string> OptionProxyTrustedNetworks { get; }

    TimeSpan OptionProxyHeaderTimeout { get; set; }

    /// <summary>IPv4 connections on an IPv6 listener (TCP and TLS on an IPv6 address; nothing on a Unix socket).</summary>
    bool OptionDualMode { get; set; }

    StreamSession? Find(Guid id);

    IEnumerable<StreamSession> All { get; }
}

/// <summary>What a protocol server gives its transport server: the protocol of each new session, and its server-level hooks.</summary>
internal interface IProtocolHostOwner
{
    StreamProtocol CreateProtocol();

    void HostStarted();

    void HostStopped();

    void HostError(SocketError error);
}
