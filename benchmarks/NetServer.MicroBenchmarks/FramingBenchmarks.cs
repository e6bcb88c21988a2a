using System;
using System.IO;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using BenchmarkDotNet.Attributes;
using NetServer.Buffers;
using NetServer.Streams;

namespace NetServer.MicroBenchmarks;

/// <summary>
/// A length-prefixed frame protocol (examples/FramedEcho) parsing retained input: 1024 frames per
/// invocation, arriving in pseudo-random cuts (fixed seed) so frames straddle reads and partial
/// frames stay in the receive buffer between deliveries. Figures are per frame.
/// </summary>
/// <remarks>
/// <para><see cref="Steps"/> repeats the receive buffer's steps of Connection.Receive.cs on a
/// <see cref="PooledBuffer"/> (a mirror: the connection's own methods are private and need a
/// connection): TryGetWritable with the read size, a copy where the socket read would write,
/// Advance, the protocol on the written bytes, Consume what it consumed, Release when the read
/// did not fill the space (the array goes back only if nothing is retained), the read size
/// doubling and halving as the engine's does.</para>
/// <para><see cref="Engine"/> and <see cref="EngineEcho"/> run the real engine: a TcpClient whose
/// connection runs over a <see cref="FeedLayer"/>, the engine's seam for TLS, here a stream that
/// hands out the cuts. That is the receive loop secure connections use (LayerReceive): the same
/// TryGetWritableSpace, Delivered, Deliver, AdaptReadSize and hooks as the plain loop, which only
/// reads the socket instead of the stream. The socket is connected (the client needs one) and
/// carries nothing. <see cref="EngineEcho"/> also sends every frame back through StartSend: the
/// sends are gathered per delivery and written by the flusher to the stream, which drops them.</para>
/// </remarks>
[MemoryDiagnoser]
public class FramingBenchmarks : IDisposable
{
    private const int Frames = 1024;

    private FrameStream _stream = null!;
    private FrameParser _parser = null!;
    private PooledBuffer _buffer = null!;
    private int _readSize;
    private int _minReadSize;

    private Socket? _listener;
    private Socket? _peer;
    private FeedClient? _client;
    private FeedStream? _feed;

    /// <summary>How the frame stream is cut into reads.</summary>
    public enum ReadSizes
    {
        /// <summary>Each read 1 byte to 2 frames long: nearly every delivery ends inside a frame.</summary>
        UpTo2Frames,

        /// <summary>Each read 1 byte to 16 KiB long, as a busy socket delivers.</summary>
        UpTo16KiB,
    }

    [Params(32, 1024)]
    public int Payload { get; set; }

    [ParamsAllValues]
    public ReadSizes Reads { get; set; }

    private int FrameSize => FrameParser.PrefixSize + Payload;

    private FrameStream CreateStream() =>
        new(Frames, Payload, Reads == ReadSizes.UpTo2Frames ? 2 * FrameSize : 16 * 1024, seed: 1);

    [GlobalSetup(Target = nameof(Steps))]
    public void SetupSteps()
    {
        _stream = CreateStream();
        _parser = new FrameParser();
        _minReadSize = 8192; // the defaults: OptionReceiveBufferSize, and no limit (64 KiB)
        _readSize = _minReadSize;
        _buffer = new PooledBuffer(BufferPool.Shared, Connection.DefaultMaxReadSize);
        Check(Steps(), written: 0);
    }

    [GlobalSetup(Target = nameof(Engine))]
    public Task SetupEngine() => StartEngineAsync(echo: false);

    [GlobalSetup(Target = nameof(EngineEcho))]
    public Task SetupEngineEcho() => StartEngineAsync(echo: true);

    [GlobalCleanup]
    public void Dispose()
    {
        _feed?.End();
        _client?.Dispose();
        _feed?.Dispose();
        _peer?.Dispose();
        _listener?.Dispose();
        _buffer?.Dispose();
        GC.SuppressFinalize(this);
    }

    /// <summary>The receive buffer's steps, as Connection.Receive.cs takes them, with the protocol called directly.</summary>
    [Benchmark(Baseline = true, OperationsPerInvoke = Frames)]
    public long Steps()
    {
        var bytes = _stream.Bytes;
        var position = 0;
        foreach (var cut in _stream.Cuts)
        {
            for (var left = cut; left > 0;)
            {
                // TryGetWritableSpace: behind the retained bytes, at most the read size.
                var room = _buffer.Limit - _buffer.Length;
                if (room <= 0 || !_buffer.TryGetWritable(Math.Min(_readSize, room), out var free))
                    throw new InvalidDataException("Retained input filled the receive limit.");

                // The socket read.
                var received = Math.Min(left, free.Count);
                System.Buffer.BlockCopy(bytes, position, free.Array!, free.Offset, received);
                position += received;
                left -= received;

                // Delivered and Deliver.
                _buffer.Advance(received);
                _buffer.Consume(_parser.OnReceived(_buffer.WrittenSpan));

                // AdaptReadSize: a read that filled the space reads again at once, with more room;
                // one that did not lets go of the array (if nothing is retained) before waiting.
                if (received >= free.Count)
                {
                    _readSize = Math.Min(_readSize * 2, _buffer.Limit);
                    continue;
                }

                if (received <= _readSize / 4 && _readSize > _minReadSize)
                    _readSize = Math.Max(_readSize / 2, _minReadSize);
                _buffer.Release();
            }
        }

        return _parser.Frames;
    }

    /// <summary>The engine's receive loop delivering the cuts to the protocol.</summary>
    [Benchmark(OperationsPerInvoke = Frames)]
    public long Engine()
    {
        _feed!.Feed();
        return _parser.Frames;
    }

    /// <summary>As <see cref="Engine"/>, the protocol sending each frame back through the writer seam.</summary>
    [Benchmark(OperationsPerInvoke = Frames)]
    public long EngineEcho()
    {
        _feed!.Feed();
        return _parser.Frames;
    }

    private async Task StartEngineAsync(bool echo)
    {
        _stream = CreateStream();
        _parser = new FrameParser { Echo = echo };
        _feed = new FeedStream(_stream);
        _listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        _listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        _listener.Listen(1);
        _client = new FeedClient((IPEndPoint)_listener.LocalEndPoint!, new FeedLayer(_feed)) { Protocol = _parser };
        var connected = _client.ConnectAsync(CancellationToken.None);
        _peer = _listener.Accept();
        if (!await connected.WaitAsync(TimeSpan.FromSeconds(10)))
            throw new InvalidOperationException($"The client did not connect: {_client.DisconnectReason}.");
        await _feed.FirstWait.WaitAsync(TimeSpan.FromSeconds(10)); // the engine's receive loop reads (TimeoutException otherwise)
        Check(Engine(), echo ? (long)Frames * FrameSize : 0);
    }

    /// <summary>One round before measuring: every frame parsed (and echoed), nothing retained.</summary>
    private void Check(long frames, long written)
    {
        if (frames != Frames || _parser.PayloadBytes != (long)Frames * Payload)
            throw new InvalidOperationException($"Parsed {frames} frames ({_parser.PayloadBytes} payload bytes); expected {Frames}.");
        if (_feed is { } feed)
        {
            if (feed.Written != written)
                throw new InvalidOperationException($"The engine wrote {feed.Written} bytes; expected {written}.");
            if (!_client!.IsConnected)
                throw new InvalidOperationException($"The connection closed: {_client.DisconnectReason} {_client.DisconnectException}");
        }
        else if (_buffer.Length != 0)
        {
            throw new InvalidOperationException($"{_buffer.Length} bytes retained after whole frames.");
        }

        Console.WriteLine($"// {_stream.Cuts.Length} cuts of {_stream.Bytes.Length} bytes ({Frames} frames of {FrameSize} bytes)" +
            (_feed is null ? string.Empty : $"; the engine made {_feed.Reads} reads"));
    }
}
