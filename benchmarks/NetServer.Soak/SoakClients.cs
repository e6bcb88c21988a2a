using System;
using System.Buffers.Binary;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Net;
using System.Net.Http;
using System.Net.Security;
using System.Security.Cryptography.X509Certificates;
using System.Net.Sockets;
using System.Net.WebSockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace NetServer.Soak;

/// <summary>
/// The client side of a soak, built on .NET's own sockets, SslStream, HttpClient and
/// ClientWebSocket (not on ours): workers per protocol, each connecting again and again, checking
/// every byte it gets back, and ending each connection one of three ways (close, reset, half-close).
/// </summary>
internal sealed class SoakClients(IReadOnlyDictionary<string, string> endpoints, int workersPerProtocol)
{
    // The server's certificate is checked against the repository's test CA (certs/ca.pem), not the machine's roots.
    private static readonly Lazy<X509ChainPolicy> s_trustTestCa = new(() =>
    {
        var policy = new X509ChainPolicy { TrustMode = X509ChainTrustMode.CustomRootTrust, RevocationMode = X509RevocationMode.NoCheck };
        policy.CustomTrustStore.Add(X509Certificate2.CreateFromPem(File.ReadAllText(Path.Combine(Benchmark.TestCertificates.Locate(Environment.GetEnvironmentVariable("NETSERVER_CERTS")), "ca.pem"))));
        return policy;
    });

    private long _exchanges;
    private long _connections;
    private long _errors;
    private long _udpSent;
    private long _udpLost;

    public long Exchanges => Interlocked.Read(ref _exchanges);

    public long Connections => Interlocked.Read(ref _connections);

    public long Errors => Interlocked.Read(ref _errors);

    public string Summary => $"{Connections} connections, {Exchanges} exchanges checked, {Errors} errors, udp {Interlocked.Read(ref _udpLost)} of {Interlocked.Read(ref _udpSent)} datagrams lost";

    /// <summary>
    /// Runs the workers until <paramref name="stop"/>: no connection starts after it, and those under
    /// way finish (their I/O is cut only 30 s later), so the end of a run is not a burst of aborts.
    /// </summary>
    public async Task RunAsync(CancellationToken stop)
    {
        using var hard = new CancellationTokenSource();
        using var _ = stop.Register(() => hard.CancelAfter(TimeSpan.FromSeconds(30)));
        var token = hard.Token;
        var workers = new List<Task>();
        for (var w = 0; w < workersPerProtocol; w++)
        {
            var seed = w;
            workers.Add(Loop("tcp", r => StreamAsync(() => Tcp("tcp"), r, token), seed, stop));
            workers.Add(Loop("uds", r => StreamAsync(() => Uds(), r, token), seed, stop));
            workers.Add(Loop("ssl", r => StreamAsync(() => Ssl(token), r, token), seed, stop));
            workers.Add(Loop("msg", r => MessagesAsync(r, token), seed, stop));
            workers.Add(Loop("http keep-alive", r => HttpKeepAliveAsync(r, token), seed, stop));
            workers.Add(Loop("http short", r => HttpShortAsync(token), seed, stop));
            workers.Add(Loop("ws", r => WebSocketAsync(r, token), seed, stop));
            workers.Add(Loop("udp", r => DatagramsAsync(r, token), seed, stop));
        }

        await Task.WhenAll(workers);
    }

    private async Task Loop(string name, Func<Random, Task> connection, int seed, CancellationToken stop)
    {
        var random = new Random(seed * 7919 + name.Length);
        while (!stop.IsCancellationRequested)
        {
            try
            {
                await connection(random);
                Interlocked.Increment(ref _connections);
            }
            catch (Exception e)
            {
                Interlocked.Increment(ref _errors);
                Console.Error.WriteLine($"soak client {name}: {e.GetType().Name}: {e.Message}");
                await Task.Delay(100, CancellationToken.None); // an error that repeats must not become a connect storm
            }
        }
    }

    private int Port(string protocol) => int.Parse(endpoints[protocol], System.Globalization.CultureInfo.InvariantCulture);

    private async Task<(Socket Socket, Stream Stream)> Tcp(string protocol)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        await socket.ConnectAsync(IPAddress.Loopback, Port(protocol));
        return (socket, new NetworkStream(socket, ownsSocket: false));
    }

    private async Task<(Socket Socket, Stream Stream)> Uds()
    {
        var socket = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified);
        await socket.ConnectAsync(new UnixDomainSocketEndPoint(endpoints["uds"]));
        return (socket, new NetworkStream(socket, ownsSocket: false));
    }

    private async Task<(Socket Socket, Stream Stream)> Ssl(CancellationToken token)
    {
        var (socket, stream) = await Tcp("ssl");
        var tls = new SslStream(stream, leaveInnerStreamOpen: false);
        try
        {
            await tls.AuthenticateAsClientAsync(new SslClientAuthenticationOptions { TargetHost = "localhost", CertificateChainPolicy = s_trustTestCa.Value }, token);
            return (socket, tls);
        }
        catch
        {
            await tls.DisposeAsync();
            socket.Dispose();
            throw;
        }
    }

    /// <summary>Echo over a stream: 1 to 20 writes of 1 byte to 16 KiB, each read back whole and compared; then close, reset or half-close.</summary>
    private async Task StreamAsync(Func<Task<(Socket Socket, Stream Stream)>> connect, Random random, CancellationToken token)
    {
        var (socket, stream) = await connect();
        using (socket)
        await using (stream)
        {
            var back = new byte[16384];
            for (var round = random.Next(1, 21); round > 0; round--)
            {
                var data = new byte[random.Next(1, 16385)];
                random.NextBytes(data);
                await stream.WriteAsync(data, token);
                await stream.ReadExactlyAsync(back.AsMemory(0, data.Length), token);
                Check(back.AsSpan(0, data.Length).SequenceEqual(data), "echoed bytes differ from those sent");
                Interlocked.Increment(ref _exchanges);
            }

            await EndAsync(socket, stream, random.Next(3), token);
        }
    }

    // 0: close; 1: reset (linger 0); 2: half-close, then the server's end must come with nothing more.
    private static async Task EndAsync(Socket socket, Stream stream, int how, CancellationToken token)
    {
        if (how == 1)
        {
            socket.LingerState = new LingerOption(true, 0);
            socket.Close();
            return;
        }

        if (how == 2 && stream is NetworkStream)
        {
            socket.Shutdown(SocketShutdown.Send);
            var rest = await stream.ReadAsync(new byte[1], token).AsTask().WaitAsync(TimeSpan.FromSeconds(10), token);
            Check(rest == 0, "bytes after the half-close");
        }
    }

    /// <summary>Byte messages: length-prefixed frames of 0 to 4 KiB, each echoed as a frame with the same payload.</summary>
    private async Task MessagesAsync(Random random, CancellationToken token)
    {
        var (socket, stream) = await Tcp("msg");
        using (socket)
        await using (stream)
        {
            var header = new byte[4];
            for (var round = random.Next(1, 41); round > 0; round--)
            {
                var payload = new byte[random.Next(0, 4097)];
                random.NextBytes(payload);
                BinaryPrimitives.WriteInt32LittleEndian(header, payload.Length);
                await stream.WriteAsync(header, token);
                await stream.WriteAsync(payload, token);
                await stream.ReadExactlyAsync(header, token);
                Check(BinaryPrimitives.ReadInt32LittleEndian(header) == payload.Length, "an echoed message of another length");
                var back = new byte[payload.Length];
                await stream.ReadExactlyAsync(back, token);
                Check(back.AsSpan().SequenceEqual(payload), "an echoed message differs");
                Interlocked.Increment(ref _exchanges);
            }

            await EndAsync(socket, stream, random.Next(3), token);
        }
    }

    private static readonly byte[] s_hello = "Hello, World!"u8.ToArray();

    /// <summary>HTTP keep-alive: one HttpClient (one pooled connection) for 1 to 50 GETs, then dropped.</summary>
    private async Task HttpKeepAliveAsync(Random random, CancellationToken token)
    {
        using var client = new System.Net.Http.HttpClient(new SocketsHttpHandler { MaxConnectionsPerServer = 1 });
        var uri = new Uri($"http://127.0.0.1:{Port("http")}/hello");
        for (var round = random.Next(1, 51); round > 0; round--)
        {
            using var response = await client.GetAsync(uri, token);
            Check(response.StatusCode == HttpStatusCode.OK, $"HTTP status {(int)response.StatusCode}");
            Check((await response.Content.ReadAsByteArrayAsync(token)).AsSpan().SequenceEqual(s_hello), "an HTTP body differs");
            Interlocked.Increment(ref _exchanges);
        }
    }

    /// <summary>HTTP short connections: one request with Connection: close, read to the server's end.</summary>
    private async Task HttpShortAsync(CancellationToken token)
    {
        var (socket, stream) = await Tcp("http");
        using (socket)
        await using (stream)
        {
            await stream.WriteAsync("GET /hello HTTP/1.1\r\nHost: soak\r\nConnection: close\r\n\r\n"u8.ToArray(), token);
            using var all = new MemoryStream();
            await stream.CopyToAsync(all, token).WaitAsync(TimeSpan.FromSeconds(10), token);
            var text = Encoding.ASCII.GetString(all.ToArray());
            Check(text.StartsWith("HTTP/1.1 200 ", StringComparison.Ordinal) && text.EndsWith("\r\n\r\nHello, World!", StringComparison.Ordinal), "a short-connection response differs");
            Interlocked.Increment(ref _exchanges);
        }
    }

    /// <summary>WebSocket: 1 to 40 binary messages echoed and compared; closed with the handshake or aborted.</summary>
    private async Task WebSocketAsync(Random random, CancellationToken token)
    {
        using var ws = new ClientWebSocket();
        await ws.ConnectAsync(new Uri($"ws://127.0.0.1:{Port("ws")}/ws"), token);
        var back = new byte[8192];
        for (var round = random.Next(1, 41); round > 0; round--)
        {
            var data = new byte[random.Next(1, 8193)];
            random.NextBytes(data);
            await ws.SendAsync(data, WebSocketMessageType.Binary, true, token);
            var length = 0;
            ValueWebSocketReceiveResult result;
            do
            {
                result = await ws.ReceiveAsync(back.AsMemory(length), token);
                length += result.Count;
            }
            while (!result.EndOfMessage);
            Check(length == data.Length && back.AsSpan(0, length).SequenceEqual(data), "an echoed WebSocket message differs");
            Interlocked.Increment(ref _exchanges);
        }

        if (random.Next(2) == 0)
            await ws.CloseAsync(WebSocketCloseStatus.NormalClosure, "bye", token);
        else
            ws.Abort();
    }

    /// <summary>UDP: 100 numbered datagrams, each waited for (1 s) and compared; a lost one is counted, a wrong one is an error.</summary>
    private async Task DatagramsAsync(Random random, CancellationToken token)
    {
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
        socket.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        var server = new IPEndPoint(IPAddress.Loopback, Port("udp"));
        var back = new byte[2048];
        for (var i = 0; i < 100; i++)
        {
            var data = new byte[random.Next(8, 1401)];
            random.NextBytes(data);
            await socket.SendToAsync(data, server, token);
            Interlocked.Increment(ref _udpSent);
            using var wait = CancellationTokenSource.CreateLinkedTokenSource(token);
            wait.CancelAfter(TimeSpan.FromSeconds(1));
            try
            {
                var received = await socket.ReceiveAsync(back, wait.Token);
                Check(back.AsSpan(0, received).SequenceEqual(data), "an echoed datagram differs");
                Interlocked.Increment(ref _exchanges);
            }
            catch (OperationCanceledException) when (!token.IsCancellationRequested)
            {
                Interlocked.Increment(ref _udpLost); // UDP may lose: counted and reported, not an error
                return; // a late echo would answer the next datagram: start over on a new socket
            }
        }
    }

    private static void Check(bool condition, string what)
    {
        if (!condition)
            throw new InvalidDataException(what);
    }
}
