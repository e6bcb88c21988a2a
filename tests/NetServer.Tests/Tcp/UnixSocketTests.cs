using System;
using System.Diagnostics;
using System.IO;
using System.Net.Sockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Tcp;

/// <summary>
/// The socket file of a Unix domain socket server: a stale file left by a dead process is
/// replaced, a live listener or a regular file at the path is left alone and Start fails, and
/// Stop removes the file it bound.
/// </summary>
public class UnixSocketTests
{
    private static readonly TimeSpan s_timeout = TimeSpan.FromSeconds(15);

    private static void Echo(Probe probe) => probe.Received = static (c, buffer, offset, size) => c.SendAsync(buffer, offset, size);

    private static async Task AssertEchoesAsync(ServerHarness harness, string text)
    {
        using var socket = await harness.ConnectRawAsync();
        var message = Encoding.ASCII.GetBytes(text);
        await socket.SendAsync(message, SocketFlags.None).WaitAsync(s_timeout);
        Assert.Equal(text, Encoding.ASCII.GetString(await Wait.ReadExactlyAsync(socket, message.Length)));
    }

    /// <summary>
    /// Leaves a socket file at <paramref name="path"/> the way a crashed server does: a process binds
    /// it and exits without closing (a .NET socket cannot do this: disposing it unlinks the path).
    /// </summary>
    private static async Task CreateStaleSocketFileAsync(string path)
    {
        var info = new ProcessStartInfo("python3") { UseShellExecute = false, RedirectStandardError = true };
        info.ArgumentList.Add("-c");
        info.ArgumentList.Add("import socket,os,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); os._exit(0)");
        info.ArgumentList.Add(path);
        using var process = Process.Start(info)!;
        using var cts = new CancellationTokenSource(s_timeout);
        var errors = process.StandardError.ReadToEndAsync(cts.Token);
        await process.WaitForExitAsync(cts.Token);
        Assert.True(process.ExitCode == 0, "python3 could not create the stale socket file: " + await errors);
        Assert.True(File.Exists(path), "The stale socket file was not created.");
    }

    private static string NewDirectory()
    {
        var directory = Path.Combine(Path.GetTempPath(), "netserver-" + Guid.NewGuid().ToString("N")[..12]);
        Directory.CreateDirectory(directory);
        return directory;
    }

    [Fact]
    public async Task Start_replaces_a_stale_socket_file_left_by_a_dead_process()
    {
        await using var harness = new ServerHarness(TransportKind.Uds);
        harness.Probe.ConfigureSession = Echo;
        await CreateStaleSocketFileAsync(harness.SocketPath!);

        // Nothing listens there: a plain bind would fail with "address in use".
        using (var probe = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified))
        {
            var refused = Assert.Throws<SocketException>(() => probe.Connect(new UnixDomainSocketEndPoint(harness.SocketPath!)));
            Assert.Equal(SocketError.ConnectionRefused, refused.SocketErrorCode);
        }

        Assert.True(harness.Start());
        Assert.True(File.Exists(harness.SocketPath));
        await AssertEchoesAsync(harness, "fresh listener");
    }

    [Fact]
    public async Task Start_fails_with_AddressAlreadyInUse_when_a_live_listener_owns_the_path_and_leaves_it_working()
    {
        var directory = NewDirectory();
        var path = Path.Combine(directory, "live.sock");
        try
        {
            using var live = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified);
            live.Bind(new UnixDomainSocketEndPoint(path));
            live.Listen(16);

            var pool = new LeakCheckingBufferPool();
            using (var server = new UdsServer(path) { BufferPool = pool })
            {
                var error = Assert.Throws<SocketException>(() => server.Start());
                Assert.Equal(SocketError.AddressAlreadyInUse, error.SocketErrorCode);
                Assert.False(server.IsStarted);
                Assert.True(server.IsSocketDisposed);
                Assert.False(server.Stop());
            }

            await pool.AssertAllReturnedAsync();
            Assert.True(File.Exists(path));

            // The live listener still takes connections. (Start's liveness probe connected and
            // closed at once, so its leftover connection may be accepted first and read as EOF.)
            using var client = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified);
            await client.ConnectAsync(new UnixDomainSocketEndPoint(path)).WaitAsync(s_timeout);
            await client.SendAsync(Encoding.ASCII.GetBytes("hi"), SocketFlags.None).WaitAsync(s_timeout);
            var greeted = false;
            for (var i = 0; i < 2 && !greeted; i++)
            {
                using var accepted = await live.AcceptAsync().WaitAsync(s_timeout);
                var buffer = new byte[2];
                using var cts = new CancellationTokenSource(s_timeout);
                greeted = await accepted.ReceiveAsync(buffer, SocketFlags.None, cts.Token) > 0;
            }

            Assert.True(greeted, "The live listener did not get the new client's bytes.");
        }
        finally
        {
            Directory.Delete(directory, recursive: true);
        }
    }

    [Fact]
    public async Task Second_server_on_a_live_path_fails_and_the_first_keeps_serving()
    {
        await using var harness = new ServerHarness(TransportKind.Uds);
        harness.Probe.ConfigureSession = Echo;
        Assert.True(harness.Start());

        using (var second = new UdsServer(harness.SocketPath!))
        {
            var error = Assert.Throws<SocketException>(() => second.Start());
            Assert.Equal(SocketError.AddressAlreadyInUse, error.SocketErrorCode);
        }

        Assert.True(File.Exists(harness.SocketPath));
        await AssertEchoesAsync(harness, "first server");
    }

    [Fact]
    public async Task Start_fails_with_IOException_for_a_regular_file_and_leaves_the_file_untouched()
    {
        var directory = NewDirectory();
        var path = Path.Combine(directory, "data.sock");
        try
        {
            await File.WriteAllTextAsync(path, "precious");
            var pool = new LeakCheckingBufferPool();
            using (var server = new UdsServer(path) { BufferPool = pool })
            {
                Assert.Throws<IOException>(() => server.Start());
                Assert.False(server.IsStarted);
            }

            await pool.AssertAllReturnedAsync();
            Assert.Equal("precious", await File.ReadAllTextAsync(path));
        }
        finally
        {
            Directory.Delete(directory, recursive: true);
        }
    }

    [Fact]
    public async Task Stop_removes_the_socket_file_and_the_server_restarts_on_the_same_path()
    {
        await using var harness = new ServerHarness(TransportKind.Uds);
        harness.Probe.ConfigureSession = Echo;
        var path = harness.SocketPath!;
        Assert.False(File.Exists(path));

        Assert.True(harness.Start());
        Assert.True(File.Exists(path));
        await AssertEchoesAsync(harness, "one");
        Assert.True(harness.Stop());
        Assert.False(File.Exists(path));

        Assert.True(harness.Start());
        Assert.True(File.Exists(path));
        await AssertEchoesAsync(harness, "two");
        Assert.True(await harness.StopAsync().WaitAsync(s_timeout));
        Assert.False(File.Exists(path));
    }

    [Fact]
    public async Task Dispose_removes_the_socket_file()
    {
        var directory = NewDirectory();
        var path = Path.Combine(directory, "disposed.sock");
        try
        {
            var pool = new LeakCheckingBufferPool();
            using (var server = new UdsServer(path) { BufferPool = pool })
            {
                Assert.True(server.Start());
                Assert.True(File.Exists(path));
            }

            Assert.False(File.Exists(path));
            await pool.AssertAllReturnedAsync();
        }
        finally
        {
            Directory.Delete(directory, recursive: true);
        }
    }

    [Fact]
    public async Task Client_connect_to_a_missing_path_ends_the_attempt_once()
    {
        var directory = NewDirectory();
        try
        {
            var probe = new Probe();
            var pool = new LeakCheckingBufferPool();
            using var client = new ProbeUdsClient(Path.Combine(directory, "missing.sock"), probe) { BufferPool = pool };
            await Assert.ThrowsAsync<SocketException>(() => client.ConnectAsync(CancellationToken.None)).WaitAsync(s_timeout);
            Assert.Equal(DisconnectReason.ConnectFailed, await probe.DisconnectedSignal.Task.WaitAsync(s_timeout));
            Assert.Equal(1, probe.DisconnectedCount);
            Assert.False(client.IsConnected);
            Assert.False(client.IsConnecting);
            await pool.AssertAllReturnedAsync();
        }
        finally
        {
            Directory.Delete(directory, recursive: true);
        }
    }
}
