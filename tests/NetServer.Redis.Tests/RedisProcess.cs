using System;
using System.Collections.Concurrent;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace NetServer.Redis.Tests;

/// <summary>A redis-server on a free loopback port in a temp dir, no persistence; stopped and removed on dispose.</summary>
/// <remarks>
/// redis-server has no "--port 0": a port is read back from a probe listener and released, and
/// redis binds it a moment later. Meanwhile another socket may take it, or a child process that
/// another test forks holds a copy of the probe listener until its exec; redis then exits with
/// "Address already in use", and whatever holds the port may still accept a connection. So redis is
/// ready only when the process this object started answers on the port (INFO names its process id);
/// a start whose redis exited is tried again (on a new port the first time, on the same port for a restart).
/// </remarks>
internal sealed class RedisProcess : IAsyncDisposable
{
    private static readonly TimeSpan s_startTimeout = TimeSpan.FromSeconds(10);
    private const int PortAttempts = 5;

    private readonly string _dir = Directory.CreateTempSubdirectory("netserver-redis-").FullName;
    private readonly ConcurrentQueue<string> _output = new();
    private Process? _process;

    public int Port { get; private set; }

    public string Configuration => $"127.0.0.1:{Port}";

    public static async Task<RedisProcess> StartAsync()
    {
        var redis = new RedisProcess();
        for (var attempt = 1; ; attempt++)
        {
            redis.Port = FreePort();
            var deadline = DateTime.UtcNow + s_startTimeout;
            if (await redis.TryStartAsync(deadline))
                return redis;
            if (attempt == PortAttempts)
                throw new InvalidOperationException($"redis-server did not start on any of {PortAttempts} free ports; its output: {redis.Output}");
        }
    }

    private static int FreePort()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        return ((IPEndPoint)listener.LocalEndpoint).Port;
    }

    private string Output => string.Join(" | ", _output);

    /// <summary>Starts redis again on the same port (after <see cref="StopAsync"/>): clients configured with it reconnect.</summary>
    public async Task RestartAsync()
    {
        var deadline = DateTime.UtcNow + s_startTimeout;
        while (!await TryStartAsync(deadline))
        {
            // The old server's socket can outlive it for a moment in a child process forked meanwhile.
            if (DateTime.UtcNow > deadline)
                throw new InvalidOperationException($"redis-server did not start again on port {Port}; its output: {Output}");
            await Task.Delay(100);
        }
    }

    /// <summary>Starts redis-server on <see cref="Port"/>; true once it answers there, false if it exited (the port was taken).</summary>
    private async Task<bool> TryStartAsync(DateTime deadline)
    {
        _output.Clear();
        var process = Process.Start(new ProcessStartInfo("redis-server",
            ["--port", Port.ToString(CultureInfo.InvariantCulture), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", _dir])
        { UseShellExecute = false, RedirectStandardOutput = true, RedirectStandardError = true })!;
        process.OutputDataReceived += (_, e) =>
        {
            if (e.Data is { } line)
                _output.Enqueue(line);
        };
        process.BeginOutputReadLine();
        while (true)
        {
            if (process.HasExited)
            {
                process.Dispose();
                return false;
            }

            if (await AnswersAsync(process.Id))
            {
                _process = process;
                return true;
            }

            if (DateTime.UtcNow > deadline)
            {
                process.Kill();
                process.Dispose();
                throw new InvalidOperationException($"redis-server did not answer on port {Port} within {s_startTimeout.TotalSeconds} s; its output: {Output}");
            }

            await Task.Delay(50);
        }
    }

    /// <summary>Whether the redis on <see cref="Port"/> is the process <paramref name="processId"/>.</summary>
    private async Task<bool> AnswersAsync(int processId)
    {
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(2));
        try
        {
            using var client = new System.Net.Sockets.TcpClient();
            await client.ConnectAsync(IPAddress.Loopback, Port, cts.Token);
            var stream = client.GetStream();
            await stream.WriteAsync("INFO server\r\n"u8.ToArray(), cts.Token);
            var expected = $"process_id:{processId}\r\n";
            var text = new StringBuilder();
            var buffer = new byte[4096];
            while (text.Length < 64 * 1024)
            {
                var read = await stream.ReadAsync(buffer, cts.Token);
                if (read == 0)
                    return false;
                text.Append(Encoding.ASCII.GetString(buffer, 0, read));
                var reply = text.ToString();
                if (reply.Contains(expected, StringComparison.Ordinal))
                    return true;
                if (reply.Contains("process_id:", StringComparison.Ordinal) && reply.EndsWith("\r\n", StringComparison.Ordinal))
                    return false; // another redis-server
            }

            return false;
        }
        catch (Exception e) when (e is SocketException or IOException or OperationCanceledException)
        {
            return false;
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
