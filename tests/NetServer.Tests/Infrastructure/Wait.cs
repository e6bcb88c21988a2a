using System;
using System.IO;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using Xunit;

namespace NetServer.Tests.Infrastructure;

/// <summary>Bounded waits, so a broken build fails in seconds instead of hanging.</summary>
public static class Wait
{
    public static readonly TimeSpan Default = TimeSpan.FromSeconds(15);

    /// <summary>Polls <paramref name="condition"/> until it holds; fails the test with <paramref name="what"/> after the timeout.</summary>
    public static Task UntilAsync(Func<bool> condition, string what, TimeSpan? timeout = null) =>
        UntilAsync(condition, () => what, timeout);

    /// <summary>As <see cref="UntilAsync(Func{bool}, string, TimeSpan?)"/>, with a description made at the timeout (so it can show the state then).</summary>
    public static async Task UntilAsync(Func<bool> condition, Func<string> what, TimeSpan? timeout = null)
    {
        var limit = DateTime.UtcNow + (timeout ?? Default);
        while (!condition())
        {
            if (DateTime.UtcNow > limit)
                Assert.Fail($"Timed out waiting for: {what()}");
            await Task.Delay(5);
        }
    }

    /// <summary>Reads exactly <paramref name="count"/> bytes from a raw socket (bounded).</summary>
    public static async Task<byte[]> ReadExactlyAsync(Socket socket, int count, TimeSpan? timeout = null)
    {
        var buffer = new byte[count];
        var read = 0;
        using var cts = new CancellationTokenSource(timeout ?? Default);
        while (read < count)
        {
            var n = await socket.ReceiveAsync(buffer.AsMemory(read), SocketFlags.None, cts.Token);
            if (n == 0)
                Assert.Fail($"The connection closed after {read} of {count} bytes.");
            read += n;
        }

        return buffer;
    }

    /// <summary>Reads until the peer closes (bounded); returns everything read.</summary>
    public static async Task<byte[]> ReadToEndAsync(Socket socket, TimeSpan? timeout = null)
    {
        using var cts = new CancellationTokenSource(timeout ?? Default);
        using var all = new MemoryStream();
        var buffer = new byte[65536];
        while (true)
        {
            var n = await socket.ReceiveAsync(buffer, SocketFlags.None, cts.Token);
            if (n == 0)
                return all.ToArray();
            all.Write(buffer, 0, n);
        }
    }
}
