using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Threading.Tasks;

namespace NetServer.Tests.Infrastructure;

/// <summary>
/// A real HAProxy in TCP mode on a free loopback port, forwarding to one backend, or round-robin to
/// several, with the given server options (<c>send-proxy</c>, <c>send-proxy-v2</c>, ...). Started in
/// the foreground and killed when disposed, with its config in a temporary directory.
/// </summary>
internal sealed class HaproxyProcess : IAsyncDisposable
{
    private readonly Process _process;
    private readonly string _directory;
    private readonly StringBuilder _output = new();

    private HaproxyProcess(Process process, string directory, IPEndPoint endpoint)
    {
        _process = process;
        _directory = directory;
        Endpoint = endpoint;
    }

    /// <summary>Where clients connect.</summary>
    public IPEndPoint Endpoint { get; }

    public static Task<HaproxyProcess> StartAsync(EndPoint backend, string serverOptions) => StartAsync([backend], serverOptions);

    /// <summary>Balances connections round-robin over <paramref name="backends"/>: consecutive connections go to consecutive backends, in order.</summary>
    public static async Task<HaproxyProcess> StartAsync(IReadOnlyList<EndPoint> backends, string serverOptions)
    {
        var directory = Path.Combine(Path.GetTempPath(), "netserver-haproxy-" + Guid.NewGuid().ToString("N")[..12]);
        Directory.CreateDirectory(directory);
        var port = FreePort();
        var servers = string.Join("\n    ", backends.Select((backend, i) =>
            $"server netserver{i + 1} {(backend is IPEndPoint ip ? $"{ip.Address}:{ip.Port}" : "unix@" + backend)} {serverOptions}"));
        var config = Path.Combine(directory, "haproxy.cfg");
        await File.WriteAllTextAsync(config, $"""
            global
                maxconn 1024
            defaults
                mode tcp
                timeout connect 5s
                timeout client 30s
                timeout server 30s
            frontend front
                bind 127.0.0.1:{port}
                default_backend back
            backend back
                balance roundrobin
                {servers}

            """);

        var info = new ProcessStartInfo("haproxy") { UseShellExecute = false, RedirectStandardOutput = true, RedirectStandardError = true };
        foreach (var arg in new[] { "-db", "-f", config })
            info.ArgumentList.Add(arg);
        var process = Process.Start(info)!;
        var haproxy = new HaproxyProcess(process, directory, new IPEndPoint(IPAddress.Loopback, port));
        process.OutputDataReceived += (_, e) => haproxy.Log(e.Data);
        process.ErrorDataReceived += (_, e) => haproxy.Log(e.Data);
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();

        // Ready once its port accepts a connection.
        await Wait.UntilAsync(() => process.HasExited || Accepts(haproxy.Endpoint), "haproxy to listen");
        if (process.HasExited)
        {
            var failure = $"haproxy exited with {process.ExitCode}: {haproxy.Output}";
            await haproxy.DisposeAsync();
            throw new InvalidOperationException(failure);
        }

        return haproxy;
    }

    public string Output
    {
        get
        {
            lock (_output)
                return _output.ToString();
        }
    }

    private void Log(string? line)
    {
        if (line is null)
            return;
        lock (_output)
            _output.AppendLine(line);
    }

    private static bool Accepts(IPEndPoint endpoint)
    {
        using var probe = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        try
        {
            probe.Connect(endpoint);
            return true;
        }
        catch (SocketException)
        {
            return false;
        }
    }

    private static int FreePort()
    {
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        socket.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        return ((IPEndPoint)socket.LocalEndPoint!).Port;
    }

    public async ValueTask DisposeAsync()
    {
        if (!_process.HasExited)
        {
            _process.Kill();
            await _process.WaitForExitAsync().WaitAsync(Wait.Default);
        }

        _process.Dispose();
        Directory.Delete(_directory, recursive: true);
    }
}
