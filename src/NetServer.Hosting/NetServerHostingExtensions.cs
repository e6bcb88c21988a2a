using System;
using System.Linq;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;

namespace NetServer.Hosting;

/// <summary>Registers NetServer servers with a .NET host.</summary>
public static class NetServerHostingExtensions
{
    /// <summary>The configuration section every server's options are bound from: <c>NetServer:{name}</c>.</summary>
    public const string SectionName = "NetServer";

    internal static string SectionOf(string name) => $"{SectionName}:{name}";

    /// <summary>
    /// Registers a server named <paramref name="name"/>: its <see cref="NetServerOptions"/> are bound from
    /// <c>NetServer:{name}</c> and validated when the host starts; <paramref name="factory"/> builds it from them
    /// (the options' limits and a <see cref="NetServerLogger"/> are applied afterwards); the host starts it and
    /// stops it. The server is a singleton, resolvable as <typeparamref name="TServer"/> (the last one registered
    /// of that type) and as a keyed service under <paramref name="name"/>. Use this overload for a stream server
    /// whose session type is your own; <see cref="AddNetServer{TServer}"/> takes every server of the library's
    /// session types, byte-message servers and UDP servers.
    /// </summary>
    /// <typeparam name="TServer">The server type.</typeparam>
    /// <typeparam name="TSession">The session type the server creates.</typeparam>
    /// <param name="services">The host's services.</param>
    /// <param name="name">The server's name: its configuration section, logger category (<c>NetServer.{name}</c>) and service key.</param>
    /// <param name="factory">Creates the server from the services and its bound options (use <see cref="NetServerOptions.CreateEndPoint"/>, <see cref="NetServerOptions.CreateSslContext"/>).</param>
    /// <returns><paramref name="services"/>.</returns>
    public static IServiceCollection AddNetServer<TServer, TSession>(this IServiceCollection services, string name, Func<IServiceProvider, NetServerOptions, TServer> factory)
        where TServer : StreamServer<TSession>
        where TSession : StreamSession =>
        services.Register(name, factory, server => HostedServer.For(name, server));

    /// <summary>
    /// Registers a server named <paramref name="name"/> (see <see cref="AddNetServer{TServer, TSession}"/>): a TCP, TLS,
    /// Unix-socket, HTTP(S) or WebSocket server (any server of <see cref="TcpSession"/>, <see cref="SslSession"/> or
    /// <see cref="UdsSession"/>), a <see cref="MessageServer"/> (protobuf servers included) or a <see cref="UdpServer"/>
    /// (which takes no <c>MaxSessions</c> or <c>AcceptorBacklog</c>: setting them fails the start).
    /// </summary>
    /// <typeparam name="TServer">The server type.</typeparam>
    /// <param name="services">The host's services.</param>
    /// <param name="name">The server's name: its configuration section, logger category and service key.</param>
    /// <param name="factory">Creates the server from the services and its bound options.</param>
    /// <returns><paramref name="services"/>.</returns>
    /// <exception cref="ArgumentException"><typeparamref name="TServer"/> is none of these kinds.</exception>
    public static IServiceCollection AddNetServer<TServer>(this IServiceCollection services, string name, Func<IServiceProvider, NetServerOptions, TServer> factory)
        where TServer : class
    {
        if (!HostedServer.CanHost(typeof(TServer)))
        {
            throw new ArgumentException(
                $"{typeof(TServer)} is not a server the host can run: expected a server of TcpSession, SslSession or UdsSession, a MessageServer or a UdpServer " +
                "(for a server of your own session type, use AddNetServer<TServer, TSession>).", nameof(TServer));
        }

        return services.Register(name, factory, server => HostedServer.For(name, server));
    }

    private static IServiceCollection Register<TServer>(this IServiceCollection services, string name, Func<IServiceProvider, NetServerOptions, TServer> factory, Func<TServer, HostedServer> adapt)
        where TServer : class
    {
        ArgumentNullException.ThrowIfNull(services);
        ArgumentException.ThrowIfNullOrEmpty(name);
        ArgumentNullException.ThrowIfNull(factory);
        // The name is the server's configuration section, logger category and key: one server per name.
        if (services.Any(d => d.ServiceType == typeof(HostedServer) && Equals(d.ServiceKey, name)))
            throw new ArgumentException($"A NetServer named '{name}' is registered already; give each server a name of its own.", nameof(name));

        services.AddOptions<NetServerOptions>(name).BindConfiguration(SectionOf(name)).ValidateOnStart();
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IValidateOptions<NetServerOptions>, NetServerOptionsValidator>());
        services.AddKeyedSingleton(name, (provider, _) => Create(provider, name, factory, adapt));
        services.AddKeyedSingleton(name, (provider, _) => (TServer)provider.GetRequiredKeyedService<HostedServer>(name).Server);
        services.AddSingleton(provider => provider.GetRequiredKeyedService<TServer>(name));
        services.AddSingleton(provider => provider.GetRequiredKeyedService<HostedServer>(name));
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IHostedService, NetServerHostedService>());
        return services;
    }

    private static HostedServer Create<TServer>(IServiceProvider provider, string name, Func<IServiceProvider, NetServerOptions, TServer> factory, Func<TServer, HostedServer> adapt)
        where TServer : class
    {
        var options = provider.GetRequiredService<IOptionsMonitor<NetServerOptions>>().Get(name);
        var server = factory(provider, options) ?? throw new InvalidOperationException($"The factory of NetServer '{name}' returned null.");
        // Without logging registered the server keeps no listener: its events cost one null check.
        var loggers = provider.GetService<ILoggerFactory>();
        var hosted = adapt(server);
        hosted.Configure(options, loggers is null ? null : () => new NetServerLogger(loggers.CreateLogger($"{SectionName}.{name}"), name));
        return hosted;
    }
}
