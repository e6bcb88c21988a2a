using System.Collections.Concurrent;
using System.Net;
using System.Text;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Udp;

public class UdpSmokeTests
{
    private sealed class EchoServer(IPEndPoint endpoint) : UdpServer(endpoint)
    {
        protected override void OnStarted() => ReceiveAsync();

        protected override void OnReceived(EndPoint endpoint, byte[] buffer, long offset, long size)
        {
            SendAsync(endpoint, buffer, offset, size);
            ReceiveAsync();
        }
    }

    private sealed class Client(IPEndPoint endpoint) : UdpClient(endpoint)
    {
        public ConcurrentQueue<string> Got { get; } = new();

        protected override void OnConnected() => ReceiveAsync();

        protected override void OnReceived(EndPoint endpoint, byte[] buffer, long offset, long size)
        {
            Got.Enqueue(Encoding.UTF8.GetString(buffer, (int)offset, (int)size));
            ReceiveAsync();
        }
    }

    [Fact]
    public async Task Echo_round_trips_datagrams()
    {
        var pool = new LeakCheckingBufferPool();
        using (var server = new EchoServer(new IPEndPoint(IPAddress.Loopback, 0)) { BufferPool = pool })
        {
            Assert.True(server.Start());
            Assert.NotEqual(0, server.Port);
            using var client = new Client((IPEndPoint)server.Endpoint) { BufferPool = pool };
            Assert.True(client.Connect());
            for (var i = 0; i < 100; i++)
                Assert.True(client.SendAsync($"hello {i}"));
            await Wait.UntilAsync(() => client.Got.Count == 100, "100 echoes");
            Assert.Equal(100, server.DatagramsReceived);
            Assert.Equal(100, server.DatagramsSent);
            Assert.Equal(100, client.DatagramsReceived);
            Assert.True(client.Disconnect());
            Assert.True(server.Stop());
        }

        await pool.AssertAllReturnedAsync();
    }

    [Fact]
    public async Task Each_of_many_clients_gets_its_own_echoes()
    {
        var pool = new LeakCheckingBufferPool();
        await using (var server = new EchoServer(new IPEndPoint(IPAddress.Loopback, 0)) { BufferPool = pool })
        {
            Assert.True(server.Start());
            var clients = new Client[10];
            for (var c = 0; c < clients.Length; c++)
            {
                clients[c] = new Client((IPEndPoint)server.Endpoint) { BufferPool = pool };
                Assert.True(clients[c].Connect());
            }

            for (var i = 0; i < 20; i++)
            {
                for (var c = 0; c < clients.Length; c++)
                    Assert.True(clients[c].SendAsync($"client {c} message {i}"));
            }

            for (var c = 0; c < clients.Length; c++)
            {
                var client = clients[c];
                await Wait.UntilAsync(() => client.Got.Count == 20, $"client {c}'s 20 echoes");
                Assert.All(client.Got, text => Assert.StartsWith($"client {c} ", text));
                await client.DisposeAsync();
            }
        }

        await pool.AssertAllReturnedAsync();
    }
}
