using System;
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace NetServer.Tests.LoadClient;

/// <summary>
/// Opens many TCP connections to an echo server from a separate process (the test process has a
/// file limit of its own). Usage:
/// <c>dotnet NetServer.Tests.LoadClient.dll HOST PORT COUNT [--echo EVERY] [--batch N] [--lifetime SECONDS]</c>.
/// </summary>
/// <remarks>
/// Protocol on stdout, one line each: <c>CONNECTED n</c> once every socket is connected;
/// <c>ECHOED n</c> after every EVERY-th socket has echoed a small message correctly;
/// <c>CLOSED n</c> when it exits (n = sockets that saw the server close them); <c>ERROR text</c>
/// on failure (exit code 1). It exits when all sockets are closed by the server, when a line (or
/// end of file) arrives on stdin, or after the lifetime (default 120 s, exit code 2), so it never
/// outlives the test that started it.
/// </remarks>
internal static class Program
{
    private static readonly TimeSpan s_connectTimeout = TimeSpan.FromSeconds(10);
    private static readonly TimeSpan s_echoTimeout = TimeSpan.FromSeconds(10);

    private static async Task<int> Main(string[] args)
    {
        try
        {
            return await RunAsync(args);
        }
        catch (Exception e)
        {
            Console.Out.WriteLine($"ERROR {e.GetType().Name}: {e.Message}");
            return 1;
        }
    }

    private static async Task<int> RunAsync(string[] args)
    {
        if (args.Length < 3)
        {
            Console.Out.WriteLine("ERROR usage: HOST PORT COUNT [--echo EVERY] [--batch N] [--lifetime SECONDS]");
            return 1;
        }

        var endpoint = new IPEndPoint(IPAddress.Parse(args[0]), int.Parse(args[1], CultureInfo.InvariantCulture));
        var count = int.Parse(args[2], CultureInfo.InvariantCulture);
        var echoEvery = 0;
        var batch = 200;
        var lifetime = TimeSpan.FromSeconds(120);
        for (var i = 3; i + 1 < args.Length; i += 2)
        {
            var value = int.Parse(args[i + 1], CultureInfo.InvariantCulture);
            switch (args[i])
            {
                case "--echo":
                    echoEvery = value;
                    break;
                case "--batch":
                    batch = Math.Max(1, value);
                    break;
                case "--lifetime":
                    lifetime = TimeSpan.FromSeconds(value);
                    break;
                default:
                    throw new ArgumentException("Unknown option " + args[i]);
            }
        }

        // Started first, so a parent that dies (stdin closes) ends this process at any stage.
        var stdin = Task.Run(() => Console.In.ReadLine());
        var expiry = Task.Delay(lifetime);

        var sockets = new Socket[count];
        try
        {
            for (var start = 0; start < count; start += batch)
            {
                var end = Math.Min(count, start + batch);
                var connects = new Task[end - start];
                for (var i = start; i < end; i++)
                    connects[i - start] = ConnectAsync(sockets, i, endpoint);
                var all = Task.WhenAll(connects);
                if (await Task.WhenAny(all, stdin, expiry) != all)
                    return 2;
                await all;
            }

            Console.Out.WriteLine($"CONNECTED {count}");

            if (echoEvery > 0)
            {
                var checks = 0;
                for (var start = 0; start < count; start += batch * echoEvery)
                {
                    var end = Math.Min(count, start + (batch * echoEvery));
                    var echoes = new System.Collections.Generic.List<Task>();
                    for (var i = start; i < end; i += echoEvery)
                        echoes.Add(EchoAsync(sockets[i], i));
                    await Task.WhenAll(echoes);
                    checks += echoes.Count;
                }

                Console.Out.WriteLine($"ECHOED {checks}");
            }

            var closed = 0;
            var allClosed = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            var scratch = new byte[64];
            for (var i = 0; i < count; i++)
            {
                _ = WaitForCloseAsync(sockets[i], scratch).ContinueWith(
                    _ =>
                    {
                        if (Interlocked.Increment(ref closed) == count)
                            allClosed.TrySetResult();
                    },
                    CancellationToken.None,
                    TaskContinuationOptions.ExecuteSynchronously,
                    TaskScheduler.Default);
            }

            var first = await Task.WhenAny(allClosed.Task, stdin, expiry);
            Console.Out.WriteLine($"CLOSED {Volatile.Read(ref closed)}");
            return first == expiry ? 2 : 0;
        }
        finally
        {
            foreach (var socket in sockets)
                socket?.Dispose();
        }
    }

    /// <summary>Connects socket <paramref name="index"/>, retrying transient failures (a full backlog, a slow accept).</summary>
    private static async Task ConnectAsync(Socket[] sockets, int index, IPEndPoint endpoint)
    {
        for (var attempt = 1; ; attempt++)
        {
            var socket = new Socket(endpoint.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
            try
            {
                using var timeout = new CancellationTokenSource(s_connectTimeout);
                await socket.ConnectAsync(endpoint, timeout.Token);
                socket.NoDelay = true;
                sockets[index] = socket;
                return;
            }
            catch (Exception e) when (attempt < 8 && IsTransient(e))
            {
                socket.Dispose();
                await Task.Delay(50 * attempt);
            }
            catch
            {
                socket.Dispose();
                throw;
            }
        }
    }

    private static bool IsTransient(Exception e) => e switch
    {
        OperationCanceledException => true,
        SocketException se => se.SocketErrorCode is SocketError.ConnectionRefused or SocketError.TimedOut
            or SocketError.TryAgain or SocketError.NoBufferSpaceAvailable or SocketError.AddressNotAvailable
            or SocketError.ConnectionReset or SocketError.WouldBlock,
        _ => false,
    };

    /// <summary>Sends a message unique to the socket and checks the same bytes come back.</summary>
    private static async Task EchoAsync(Socket socket, int index)
    {
        var message = Encoding.ASCII.GetBytes($"echo-{index:D6}\n");
        using var timeout = new CancellationTokenSource(s_echoTimeout);
        var sent = 0;
        while (sent < message.Length)
            sent += await socket.SendAsync(message.AsMemory(sent), SocketFlags.None, timeout.Token);

        var reply = new byte[message.Length];
        var read = 0;
        while (read < reply.Length)
        {
            var n = await socket.ReceiveAsync(reply.AsMemory(read), SocketFlags.None, timeout.Token);
            if (n == 0)
                throw new InvalidOperationException($"Socket {index} closed during the echo check after {read} bytes.");
            read += n;
        }

        if (!reply.AsSpan().SequenceEqual(message))
            throw new InvalidOperationException($"Socket {index} echoed '{Encoding.ASCII.GetString(reply)}'.");
    }

    /// <summary>Completes when the server closes (or resets) the connection.</summary>
    private static async Task WaitForCloseAsync(Socket socket, byte[] scratch)
    {
        try
        {
            while (await socket.ReceiveAsync(scratch, SocketFlags.None) > 0)
            {
            }
        }
        catch (SocketException)
        {
            // A reset is a close too.
        }
        catch (ObjectDisposedException)
        {
            // Disposed on exit.
        }
    }
}
