using System;
using Microsoft.Extensions.Logging;
using NetServer.Hosting;

namespace NetServer.Benchmark;

/// <summary>
/// --logging LEVEL: the server's events written by <see cref="NetServerLogger"/> (what a hosted
/// server gets) to a console logger at LEVEL, so a run measures what logging costs at a host's
/// default level (information: listening and stopped only; a connection's close is debug) or
/// attached and off (none).
/// </summary>
internal static class BenchLogging
{
    private static ILoggerFactory? s_factory;

    public static LogLevel ParseLevel(string text) => text switch
    {
        "information" or "info" => LogLevel.Information,
        "debug" => LogLevel.Debug,
        "warning" => LogLevel.Warning,
        "none" => LogLevel.None,
        _ => throw new ArgumentException($"Unknown log level '{text}' (information, debug, warning, none)."),
    };

    /// <summary>The listener a server of this run gets (the logger factory lives for the process).</summary>
    public static NetServerLogger Listener(LogLevel level)
    {
        s_factory ??= LoggerFactory.Create(logging => logging.SetMinimumLevel(level).AddSimpleConsole(console => console.SingleLine = true));
        return new NetServerLogger(s_factory.CreateLogger("NetServer.bench"), "bench");
    }
}
