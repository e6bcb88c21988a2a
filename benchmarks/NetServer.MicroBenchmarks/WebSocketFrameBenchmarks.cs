using System;
using System.Diagnostics.CodeAnalysis;
using System.Linq;
using System.Text;
using BenchmarkDotNet.Attributes;
using NetServer.WebSockets;

namespace NetServer.MicroBenchmarks;

/// <summary>
/// The pure pieces of the WebSocket frame layer: a masked frame header written and read back,
/// payload masking in place on 32 B, 1 KiB and 64 KiB (and the 1 KiB copy-and-mask a client send
/// does), a new mask key, and UTF-8 validation of a 32-byte ASCII text and a 1 KiB mixed one
/// (Latin, Greek, CJK, emoji), whole and in three reads. Hot paths: 0 B/op expected.
/// </summary>
[MemoryDiagnoser]
public class WebSocketFrameBenchmarks
{
    private const uint Key = 0x3d21fa37;

    private readonly byte[] _header = new byte[WsFrameHeader.MaxHeaderLength];
    private readonly byte[] _payload32 = new byte[32];
    private readonly byte[] _payload1K = new byte[1024];
    private readonly byte[] _payload64K = new byte[64 * 1024];
    private readonly byte[] _copy1K = new byte[1024];
    private byte[] _ascii32 = null!;
    private byte[] _mixed1K = null!;
    private int _cut1;
    private int _cut2;
    private WsUtf8Validator _validator;

    [GlobalSetup]
    public void Setup()
    {
        new Random(1).NextBytes(_payload64K);
        _payload64K.AsSpan(0, 1024).CopyTo(_payload1K);
        _payload64K.AsSpan(0, 32).CopyTo(_payload32);

        _ascii32 = Encoding.ASCII.GetBytes("{\"type\":\"tick\",\"price\":101.255}\n");
        var mixed = new StringBuilder();
        while (Encoding.UTF8.GetByteCount(mixed.ToString()) < 1024)
            mixed.Append("Grüße aus Zürich, καλημέρα κόσμε, 你好世界 😀 and some plain ASCII words. ");
        _mixed1K = Encoding.UTF8.GetBytes(mixed.ToString());
        var cut = 1024;
        while ((_mixed1K[cut] & 0xC0) == 0x80)
            cut--; // end on a code point boundary
        _mixed1K = _mixed1K.AsSpan(0, cut).ToArray();
        _cut1 = InsideCodePoint(300);
        _cut2 = InsideCodePoint(700);

        // Check one round before measuring.
        if (HeaderWriteAndRead() != 1024 + 8)
            throw new InvalidOperationException("The header did not read back.");
        var original = _payload1K.ToArray();
        ApplyMask1KiB();
        ApplyMask1KiB();
        if (!original.AsSpan().SequenceEqual(_payload1K))
            throw new InvalidOperationException("Masking twice did not give the payload back.");
        if (_ascii32.Length != 32)
            throw new InvalidOperationException("The ASCII sample is not 32 bytes.");
        if (!Utf8Ascii32() || !Utf8Mixed1KiB() || !Utf8Mixed1KiBInThreeReads())
            throw new InvalidOperationException("The UTF-8 samples did not validate.");
        if (_mixed1K.Count(b => b >= 0x80) < 200)
            throw new InvalidOperationException("The mixed sample is not mixed.");
    }

    [Benchmark]
    public long HeaderWriteAndRead()
    {
        var written = WsFrameHeader.Write(_header, WsOpcode.Binary, fin: true, rsv1: false, 1024, masked: true, Key);
        return WsFrameHeader.TryRead(_header, out var header) == WsHeaderStatus.Ok
            ? header.PayloadLength + header.HeaderLength
            : -written;
    }

    [Benchmark]
    public int ApplyMask32B() => WsMask.Apply(_payload32, Key, 1);

    [Benchmark]
    public int ApplyMask1KiB() => WsMask.Apply(_payload1K, Key, 0);

    [Benchmark]
    public int ApplyMask64KiB() => WsMask.Apply(_payload64K, Key, 0);

    [Benchmark]
    public int CopyMasked1KiB() => WsMask.CopyMasked(_payload1K, _copy1K, Key, 0);

    [Benchmark]
    [SuppressMessage("Performance", "CA1822", Justification = "A benchmark is an instance method.")]
    public uint NewKey() => WsMask.NewKey();

    [Benchmark]
    public bool Utf8Ascii32()
    {
        _validator.Reset();
        return _validator.Append(_ascii32) && _validator.IsComplete;
    }

    [Benchmark]
    public bool Utf8Mixed1KiB()
    {
        _validator.Reset();
        return _validator.Append(_mixed1K) && _validator.IsComplete;
    }

    [Benchmark]
    public bool Utf8Mixed1KiBInThreeReads()
    {
        _validator.Reset();
        var mixed = _mixed1K.AsSpan();
        return _validator.Append(mixed.Slice(0, _cut1)) && _validator.Append(mixed.Slice(_cut1, _cut2 - _cut1))
            && _validator.Append(mixed.Slice(_cut2)) && _validator.IsComplete;
    }

    // The first index from start that splits a multi-byte code point: the reads end mid-character.
    private int InsideCodePoint(int start)
    {
        while ((_mixed1K[start] & 0xC0) != 0x80)
            start++;
        return start;
    }
}
