using System;
using System.Buffers.Binary;
using System.IO;
using System.Net;
using System.Security.Authentication;
using System.Threading;
using System.Threading.Tasks;

namespace NetServer.Examples.FramedEcho;

// One protocol class, hosted by the session of each transport: a session only picks its protocol.
internal sealed class TcpFramedSession(TcpServer server) : TcpSession(server)
{
    protected override void OnConnected() => Protocol = new FramedEcho();
}

internal sealed class UdsFramedSession(UdsServer server) : UdsSession(server)
{
    protected override void OnConnected() => Protocol = new FramedEcho();
}

internal sealed class SslFramedSession(SslServer server) : SslSession(server)
{
    protected override void OnConnected() => Protocol = new FramedEcho();
}

internal sealed class TcpFramedServer(IPAddress address) : TcpServer(address, 0)
{
    protected override TcpSession CreateSession() => new TcpFramedSession(this);
}

internal sealed class UdsFramedServer(string path) : UdsServer(path)
{
    protected override UdsSession CreateSession() => new UdsFramedSession(this);
}

internal sealed class SslFramedServer(SslContext context, IPAddress address) : SslServer(context, address, 0)
{
    protected override SslSession CreateSession() => new SslFramedSession(this);
}

/// <summary>
/// The client side reuses the protocol's framing to count the echoes: a protocol on a client,
/// handing each whole frame to a callback.
/// </summary>
internal sealed class FrameCounter : StreamProtocol
{
    private readonly TaskCompletionSource<long> _done = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly long _expected;
    private long _frames;
    private long _bytes;

    public FrameCounter(long expected) => _expected = expected;

    public Task<long> Done => _done.Task;

    public long Bytes => _bytes;

    protected override int OnReceived(ReadOnlySpan<byte> data)
    {
        var consumed = 0;
        while (data.Length - consumed >= 4)
        {
            var length = BinaryPrimitives.ReadInt32LittleEndian(data[consumed..]);
            if (data.Length - consumed - 4 < length)
                break;
            var payload = data.Slice(consumed + 4, length);
            if (payload.Length > 0 && payload[0] != (byte)(_frames % 251))
                _done.TrySetException(new InvalidDataException($"Frame {_frames} came back changed."));
            _bytes += payload.Length;
            consumed += 4 + length;
            if (++_frames == _expected)
                _done.TrySetResult(_frames);
        }

        return consumed;
    }

    protected override void OnDisconnected(DisconnectReason reason) =>
        _done.TrySetException(new IOException($"The connection ended early: {reason}."));
}

internal static class Program
{
    private const string Usage = "Usage: FramedEcho tcp|uds|ssl [frames] [--certs DIR]";

    /// <summary>
    /// Starts an echo server of length-prefixed frames on the chosen transport (a free port, a
    /// socket file in the temp folder, or TLS with the repository's test certificates), sends it
    /// <c>frames</c> frames (default 10,000) of random sizes from a client whose protocol counts
    /// the echoes, and prints what came back.
    /// </summary>
    private static async Task<int> Main(string[] args)
    {
        if (args.Length < 1 || args[0] is not ("tcp" or "uds" or "ssl"))
        {
            Console.Error.WriteLine(Usage);
            return 2;
        }

        var frames = args.Length > 1 && int.TryParse(args[1], out var count) ? count : 10_000;
        var certs = Array.IndexOf(args, CertificateFolder.Option) is var at and >= 0 && at + 1 < args.Length ? args[at + 1] : null;
        switch (args[0])
        {
            case "tcp":
            {
                using var server = new TcpFramedServer(IPAddress.Loopback);
                server.Start();
                using var client = new TcpClient((IPEndPoint)server.Endpoint);
                return await RunAsync(client, "tcp", frames);
            }

            case "uds":
            {
                var path = Path.Combine(Path.GetTempPath(), $"framed-echo-{Environment.ProcessId}.sock");
                using var server = new UdsFramedServer(path);
                server.Start();
                using var client = new UdsClient(path);
                return await RunAsync(client, "uds", frames);
            }

            default:
            {
                using var folder = CertificateFolder.Open(certs);
                if (folder?.Load(CertificateFolder.ServerFile) is not { } certificate || folder.Load(CertificateFolder.AuthorityFile) is not { } authority)
                {
                    Console.Error.WriteLine("The test certificates (certs/) were not found; pass --certs DIR.");
                    return 2;
                }

                using var server = new SslFramedServer(new SslContext(SslProtocols.None, certificate), IPAddress.Loopback);
                server.Start();
                var trust = new SslContext();
                trust.TrustedCertificateAuthorities.Add(authority);
                using var client = new SslClient(trust, (IPEndPoint)server.Endpoint);
                return await RunAsync(client, "ssl", frames);
            }
        }
    }

    /// <summary>Connects, sends the frames (each built in place and committed with backpressure) and waits for every echo.</summary>
    private static async Task<int> RunAsync(StreamClient client, string transport, int frames)
    {
        var counter = new FrameCounter(frames);
        client.Protocol = counter;
        await client.ConnectAsync(CancellationToken.None);
        var random = new Random(1);
        long sent = 0;
        for (var i = 0; i < frames; i++)
        {
            var length = random.Next(0, i % 1000 == 0 ? FramedEcho.MaxFrame : 2000);
            using var frame = client.StartSend(4 + length);
            BinaryPrimitives.WriteInt32LittleEndian(frame.GetSpan(4), length);
            frame.Advance(4);
            frame.GetSpan(length).Slice(0, length).Fill((byte)(i % 251));
            frame.Advance(length);
            if (!await frame.CommitAsync())
                break;
            sent += length;
        }

        var echoed = await counter.Done.WaitAsync(TimeSpan.FromSeconds(60));
        Console.WriteLine($"Echoed {echoed} frames ({counter.Bytes} of {sent} payload bytes) over {transport}.");
        await client.DisconnectAsync(CancellationToken.None);
        return counter.Bytes == sent ? 0 : 1;
    }
}
