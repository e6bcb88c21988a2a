using System;
using System.IO;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using BenchmarkDotNet.Attributes;

namespace NetServer.MicroBenchmarks;

/// <summary>
/// The frame protocol of <see cref="FramingBenchmarks"/> end to end: a raw peer socket writes
/// 8192 frames per invocation in pseudo-random cuts of 1 byte to 16 KiB (blocking sends, no
/// Nagle delay), and a client's engine receives them over loopback TCP or a Unix domain socket
/// and parses them from retained input. Figures are per frame (frames/s = 1e9 / Mean); the time
/// includes the peer's sends and the wake-up of the receive loop. The memory diagnoser counts the
/// whole process (every thread), so Allocated covers the receive loop and the runtime's socket
/// engine as well.
/// </summary>
[MemoryDiagnoser]
public class FramingSocketBenchmarks : IDisposable
{
    private const int Frames = 8192;

    private static readonly TimeSpan s_timeout = TimeSpan.FromSeconds(10);

    private readonly ManualResetEventSlim _arrived = new();
    private FrameStream _stream = null!;
    private FrameParser _parser = null!;
    private Socket? _listener;
    private Socket? _peer;
    private StreamClient? _client;
    private string? _path;

    public enum Transports
    {
        Tcp,
        Uds,
    }

    [Params(32, 1024)]
    public int Payload { get; set; }

    [ParamsAllValues]
    public Transports Transport { get; set; }

    [GlobalSetup]
    public async Task Setup()
    {
        _stream = new FrameStream(Frames, Payload, maxCut: 16 * 1024, seed: 1);
        _parser = new FrameParser { Arrived = _arrived };
        EndPoint endpoint;
        if (Transport == Transports.Tcp)
        {
            _listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
            _listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            endpoint = _listener.LocalEndPoint!;
            _client = new TcpClient((IPEndPoint)endpoint) { Protocol = _parser };
        }
        else
        {
            _path = Path.Combine(Path.GetTempPath(), $"netserver-framing-{Guid.NewGuid():N}.sock");
            _listener = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified);
            endpoint = new UnixDomainSocketEndPoint(_path);
            _listener.Bind(endpoint);
            _client = new UdsClient((UnixDomainSocketEndPoint)endpoint) { Protocol = _parser };
        }

        _listener.Listen(1);
        var connected = _client.ConnectAsync(CancellationToken.None);
        _peer = _listener.Accept();
        if (Transport == Transports.Tcp)
            _peer.NoDelay = true; // a short last cut must not wait for the previous one's acknowledgement
        if (!await connected.WaitAsync(s_timeout))
            throw new InvalidOperationException($"The client did not connect: {_client.DisconnectReason}.");

        var frames = Receive();
        if (frames != Frames || _parser.PayloadBytes != (long)Frames * Payload)
            throw new InvalidOperationException($"Received {frames} frames ({_parser.PayloadBytes} payload bytes); expected {Frames}.");
        Console.WriteLine($"// {_stream.Cuts.Length} cuts of {_stream.Bytes.Length} bytes ({Frames} frames)");
    }

    [GlobalCleanup]
    public void Dispose()
    {
        _client?.Dispose();
        _peer?.Dispose();
        _listener?.Dispose();
        if (_path is not null)
            File.Delete(_path);
        _arrived.Dispose();
        GC.SuppressFinalize(this);
    }

    /// <summary>The peer writes the frames in their cuts; returns once the client's protocol has parsed them all.</summary>
    [Benchmark(OperationsPerInvoke = Frames)]
    public long Receive()
    {
        _arrived.Reset();
        _parser.Target += Frames;
        var bytes = _stream.Bytes;
        var position = 0;
        foreach (var cut in _stream.Cuts)
        {
            _peer!.Send(bytes, position, cut, SocketFlags.None);
            position += cut;
        }

        if (!_arrived.Wait(s_timeout))
            throw new TimeoutException($"The client parsed {_parser.Frames} of {_parser.Target} frames in {s_timeout.TotalSeconds} s ({_client!.DisconnectReason}).");
        return _parser.Frames;
    }
}
