using System;
using System.Net;
using System.Net.Sockets;
using System.Threading.Tasks;
using Microsoft.Extensions.DependencyInjection;

namespace NetServer.Hosting.Tests;

/// <summary>A service the sessions take from DI, to show sessions built by the container.</summary>
public sealed class EchoCounter
{
    private long _bytes;

    public long Bytes => System.Threading.Interlocked.Read(ref _bytes);

    public void Add(int count) => System.Threading.Interlocked.Add(ref _bytes, count);
}

/// <summary>Echoes what it receives and counts it in the DI-provided <see cref="EchoCounter"/>.</summary>
public sealed class EchoSession(TcpServer server, EchoCounter counter) : TcpSession(server)
{
    protected override void OnReceived(ReadOnlySpan<byte> buffer)
    {
        counter.Add(buffer.Length);
        SendAsync(buffer);
    }
}

/// <summary>Creates its sessions through the container (ActivatorUtilities fills the constructor's services).</summary>
public sealed class EchoServer(IServiceProvider services, IPEndPoint endpoint) : TcpServer(endpoint)
{
    protected override TcpSession CreateSession() => ActivatorUtilities.CreateInstance<EchoSession>(services, this);
}

/// <summary>Reads for the tests' raw sockets.</summary>
internal static class SocketReads
{
    /// <summary>Reads until <paramref name="buffer"/> is full or the peer ends; each read bounded by <paramref name="timeout"/>. Returns the bytes read.</summary>
    public static async Task<int> FillAsync(Socket socket, byte[] buffer, TimeSpan timeout)
    {
        var total = 0;
        while (total < buffer.Length)
        {
            var read = await socket.ReceiveAsync(buffer.AsMemory(total), SocketFlags.None).AsTask().WaitAsync(timeout);
            if (read == 0)
                break;
            total += read;
        }

        return total;
    }
}
