using System;
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
    /// of that type) and as a keyed service under <paramref name="name"/>.
    /// </summary>
    /// <typeparam name="TServer">The server type.</typeparam>
    /// <typeparam name="TSession">The session type the server creates.</typeparam>
    /// <param name="services">The host's services.</param>
    /// <param name="name">The server's name: its configuration section, logger category (<c>NetServer.{name}</c>) and service key.</param>
    /// <param name="factory">Creates the server from the services and its bound options (use <see cref="NetServerOptions.CreateEndPoint"/>, <see cref="NetServerOptions.CreateSslContext"/>).</param>
    /// <returns><paramref name="services"/>.</returns>
    public static IServiceCollection AddNetServer<TServer, TSession>(this IServiceCollection services, string name, Func<IServiceProvider, NetServerOptions, TServer> factory)
        where TServer : StreamServer<TSession>
        where TSession : StreamSession
    {
        ArgumentNullException.ThrowIfNull(services);
        ArgumentException.ThrowIfNullOrEmpty(name);
        ArgumentNullException.ThrowIfNull(factory);

        services.AddOptions<NetServerOptions>(name).BindConfiguration(SectionOf(name)).ValidateOnStart();
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IValidateOptions<NetServerOptions>, NetServerOptionsValidator>());
        services.AddKeyedSingleton(name, (provider, _) => Create<TServer, TSession>(provider, name, factory));
        services.AddSingleton(provider => provider.GetRequiredKeyedService<TServer>(name));
        services.AddSingleton(provider => HostedServer.For(name, provider.GetRequiredKeyedService<TServer>(name)));
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IHostedService, NetServerHostedService>());
        return services;
    }

    /// <summary>
    /// Registers a TCP, HTTP or WebSocket server (any server of <see cref="TcpSession"/>s) named <paramref name="name"/>;
    /// see <see cref="AddNetServer{TServer, TSession}(IServiceCollection, string, Func{IServiceProvider, NetServerOptions, TServer})"/>.
    /// </summary>
    /// <typeparam name="TServer">The server type.</typeparam>
    /// <param name="services">The host's services.</param>
    /// <param name="name">The server's name: its configuration section, logger category and service key.</param>
    /// <param name="factory">Creates the server from the services and its bound options.</param>
    /// <returns><paramref name="services"/>.</returns>
    public static IServiceCollection AddNetServer<TServer>(this IServiceCollection services, string name, Func<IServiceProvider, NetServerOptions, TServer> factory)
        where TServer : StreamServer<TcpSession> =>
        services.AddNetServer<TServer, TcpSession>(name, factory);

    private static TServer Create<TServer, TSession>(IServiceProvider provider, string name, Func<IServiceProvider, NetServerOptions, TServer> factory)
        where TServer : StreamServer<TSession>
        where TSession : StreamSession
    {
        var options = provider.GetRequiredService<IOptionsMonitor<NetServerOptions>>().Get(name);
        var server = factory(provider, options);
        server.OptionMaxSessions = options.MaxSessions;
        if (options.AcceptorBacklog > 0)
            server.OptionAcceptorBacklog = options.AcceptorBacklog;
        // Without logging registered the server keeps no listener: its events cost one null check.
        if (server.EventListener is null && provider.GetService<ILoggerFactory>() is { } loggers)
            server.EventListener = new NetServerLogger(loggers.CreateLogger($"{SectionName}.{name}"), name);
        return server;
    }
}
