using System;
using System.Net;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Tcp;

public class SmokeTests
{
    private sealed class EchoSession(TcpServer server) : TcpSession(server)
    {
        protected override void OnReceived(byte[] buffer, long offset, long size) => SendAsync(buffer, offset, size);
    }

    private sealed class EchoServer(IPAddress address, int port) : TcpServer(address, port)
    {
        protected override TcpSession CreateSession() => new EchoSession(this);
    }

    [Fact]
    public async Task Echo_round_trip()
    {
        var pool = new LeakCheckingBufferPool();
        using (var server = new EchoServer(IPAddress.Loopback, 0) { })
        {
            server.BufferPool = pool;
            Assert.True(server.Start());
            Assert.NotEqual(0, server.Port);

            using var client = new System.Net.Sockets.TcpClient();
            await client.ConnectAsync(IPAddress.Loopback, server.Port);
            var stream = client.GetStream();
            var payload = new byte[100_000];
            new Random(1).NextBytes(payload);
            var writer = stream.WriteAsync(payload).AsTask();
            var got = new byte[payload.Length];
            var read = 0;
            while (read < got.Length)
            {
                var n = await stream.ReadAsync(got.AsMemory(read)).AsTask().WaitAsync(TimeSpan.FromSeconds(10));
                Assert.NotEqual(0, n);
                read += n;
            }

            await writer;
            Assert.Equal(payload, got);
            Assert.True(server.Stop());
        }

        await pool.AssertAllReturnedAsync();
    }
}
