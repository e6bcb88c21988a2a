using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Diagnostics;

namespace NetServer.Hosting;

/// <summary>
/// One registered server as the hosted service drives it: a stream server (TCP, TLS, Unix sockets,
/// HTTP, WebSocket), a byte-message or protobuf server, or a UDP server. They share no base the host
/// could use, so each kind is adapted here once, as delegates, instead of the core gaining an
/// interface for the host.
/// </summary>
internal sealed class HostedServer
{
    private readonly Func<bool> _start;
    private readonly Func<bool> _disconnectAll;
    private readonly Func<Task<bool>> _stop;
    private readonly Action<NetServerOptions, Func<NetServerEventListener>?> _configure;

    private HostedServer(string name, object server, Func<bool> start, Func<bool> disconnectAll, Func<Task<bool>> stop, Action<NetServerOptions, Func<NetServerEventListener>?> configure)
    {
        Name = name;
        Server = server;
        _start = start;
        _disconnectAll = disconnectAll;
        _stop = stop;
        _configure = configure;
    }

    public string Name { get; }

    public object Server { get; }

    /// <summary>True when <paramref name="type"/> is a server kind the host can run without naming its session type.</summary>
    public static bool CanHost(Type type) =>
        typeof(StreamServer<TcpSession>).IsAssignableFrom(type) || typeof(StreamServer<SslSession>).IsAssignableFrom(type) ||
        typeof(StreamServer<UdsSession>).IsAssignableFrom(type) || typeof(MessageServer).IsAssignableFrom(type) ||
        typeof(UdpServer).IsAssignableFrom(type);

    public static HostedServer For<TSession>(string name, StreamServer<TSession> server)
        where TSession : StreamSession =>
        new(name, server, server.Start, server.DisconnectAll, server.StopAsync, (options, listener) =>
        {
            server.OptionMaxSessions = options.MaxSessions;
            if (options.AcceptorBacklog > 0)
                server.OptionAcceptorBacklog = options.AcceptorBacklog;
            ApplyProxy(options, mode => server.OptionProxyProtocol = mode, server.OptionProxyTrustedNetworks, timeout => server.OptionProxyHeaderTimeout = timeout);
            server.EventListener ??= listener?.Invoke();
        });

    /// <summary>The PROXY protocol keys that are set, applied to a stream or message server (which share no base).</summary>
    private static void ApplyProxy(NetServerOptions options, Action<ProxyProtocolMode> setMode, ICollection<string> trusted, Action<TimeSpan> setTimeout)
    {
        if (options.ProxyProtocol != ProxyProtocolMode.Off)
            setMode(options.ProxyProtocol);
        foreach (var network in options.ProxyTrustedNetworks)
            trusted.Add(network);
        if (options.ProxyHeaderTimeout is { } timeout)
            setTimeout(timeout);
    }

    /// <summary>The adapter of a server of a kind <see cref="CanHost"/> accepts.</summary>
    public static HostedServer For(string name, object server) => server switch
    {
        StreamServer<TcpSession> tcp => For(name, tcp),
        StreamServer<SslSession> ssl => For(name, ssl),
        StreamServer<UdsSession> uds => For(name, uds),
        MessageServer messages => new(name, messages, messages.Start, messages.DisconnectAll, messages.StopAsync, (options, listener) =>
        {
            messages.OptionMaxSessions = options.MaxSessions;
            if (options.AcceptorBacklog > 0)
                messages.OptionAcceptorBacklog = options.AcceptorBacklog;
            ApplyProxy(options, mode => messages.OptionProxyProtocol = mode, messages.OptionProxyTrustedNetworks, timeout => messages.OptionProxyHeaderTimeout = timeout);
            messages.EventListener ??= listener?.Invoke();
        }),
        UdpServer udp => new(name, udp, udp.Start, static () => true, () => Task.Run(udp.Stop), (options, listener) =>
        {
            if (options.MaxSessions != 0 || options.AcceptorBacklog != 0)
                throw new InvalidOperationException($"NetServer '{name}' is a UDP server: {NetServerHostingExtensions.SectionOf(name)}:MaxSessions and :AcceptorBacklog do not apply to it; remove them.");
            if (options.HasProxySettings)
                throw new InvalidOperationException($"NetServer '{name}' is a UDP server: the PROXY protocol keys ({NetServerHostingExtensions.SectionOf(name)}:ProxyProtocol, :ProxyTrustedNetworks, :ProxyHeaderTimeout) do not apply to it; remove them.");
            udp.EventListener ??= listener?.Invoke();
        }),
        _ => throw new ArgumentException($"NetServer '{name}': {server.GetType()} is not a server the host can run.", nameof(server)),
    };

    /// <summary>Applies the bound options' limits and, when the server has none yet, the listener <paramref name="listener"/> makes.</summary>
    public void Configure(NetServerOptions options, Func<NetServerEventListener>? listener) => _configure(options, listener);

    public void Start()
    {
        if (!_start())
            throw new InvalidOperationException($"NetServer '{Name}' was already started; a hosted server is started by the host only.");
    }

    /// <summary>
    /// Closes the sessions gracefully (each sends what it has queued) while <paramref name="cancellationToken"/>
    /// (the host's shutdown timeout) allows, then stops the server, which aborts what is left.
    /// </summary>
    public async Task StopAsync(CancellationToken cancellationToken)
    {
        try
        {
            // DisconnectAll blocks until the sessions finished (bounded by the engine's own timeout): off the host's thread.
            await Task.Run(_disconnectAll, CancellationToken.None).WaitAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
            // Out of time for a graceful close: StopAsync below aborts the sessions left.
        }

        await _stop().ConfigureAwait(false);
    }
}
