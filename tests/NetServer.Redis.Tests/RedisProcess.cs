using System;
using System.Diagnostics;
using System.IO;
using System.Net;
using System.Net.Sockets;
using System.Threading.Tasks;

namespace NetServer.Redis.Tests;

/// <summary>A redis-server on a free loopback port in a temp dir, no persistence; stopped and removed on dispose.</summary>
internal sealed class RedisProcess : IAsyncDisposable
{
    private readonly string _dir = Directory.CreateTempSubdirectory("netserver-redis-").FullName;
    private Process? _process;

    public int Port { get; } = FreePort();

    public string Configuration => $"127.0.0.1:{Port}";

    public static async Task<RedisProcess> StartAsync()
    {
        var redis = new RedisProcess();
        await redis.RestartAsync();
        return redis;
    }

    // redis-server has no "--port 0": bind port 0, read it back, release it.
    private static int FreePort()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        return ((IPEndPoint)listener.LocalEndpoint).Port;
    }

    public async Task RestartAsync()
    {
        _process = Process.Start(new ProcessStartInfo("redis-server",
            ["--port", Port.ToString(System.Globalization.CultureInfo.InvariantCulture), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", _dir])
        { UseShellExecute = false, RedirectStandardOutput = true, RedirectStandardError = true })!;
        _process.OutputDataReceived += (_, _) => { };
        _process.BeginOutputReadLine();
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(10);
        while (true)
        {
            try
            {
                using var client = new System.Net.Sockets.TcpClient();
                await client.ConnectAsync(IPAddress.Loopback, Port);
                return;
            }
            catch (SocketException) when (DateTime.UtcNow < deadline)
            {
                await Task.Delay(50);
            }
        }
    }

    public async Task StopAsync()
    {
        if (_process is null || _process.HasExited)
            return;
        _process.Kill();
        await _process.WaitForExitAsync().WaitAsync(TimeSpan.FromSeconds(10));
        _process.Dispose();
        _process = null;
    }

    public async ValueTask DisposeAsync()
    {
        await StopAsync();
        Directory.Delete(_dir, recursive: true);
    }
}
