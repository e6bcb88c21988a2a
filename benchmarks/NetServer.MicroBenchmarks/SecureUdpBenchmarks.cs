using System;
using System.Security.Cryptography;
using BenchmarkDotNet.Attributes;

namespace NetServer.MicroBenchmarks;

/// <summary>
/// Secure UDP's per-datagram work (docs/secure-udp.md): sealing a 32-byte and a 1200-byte payload,
/// and opening it in place (each datagram sealed once and opened once, so the replay window sees
/// only new counters), with AES-256-GCM and, where the platform has it, ChaCha20-Poly1305; and
/// the bare platform <see cref="AesGcm"/> encryption under it, for the cost of the framing itself.
/// Opening alone is <see cref="SealAndOpen"/> minus <see cref="Seal"/>. Hot paths: 0 B/op expected.
/// </summary>
[MemoryDiagnoser]
#pragma warning disable CA1001 // GlobalCleanup disposes the sessions and the AesGcm.
public class SecureUdpBenchmarks
#pragma warning restore CA1001
{
    private readonly byte[] _payload = new byte[1200];
    private readonly byte[] _datagram = new byte[1200 + SecureUdpSession.Overhead];
    private readonly byte[] _nonce = new byte[12];
    private readonly byte[] _tag = new byte[16];
    private SecureUdpSession _sender = null!;
    private SecureUdpSession _receiver = null!;
    private AesGcm _aes = null!;

    [Params(SecureUdpAlgorithm.AesGcm, SecureUdpAlgorithm.ChaCha20Poly1305)]
    public SecureUdpAlgorithm Algorithm { get; set; }

    [Params(32, 1200)]
    public int Size { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        if (!SecureUdpSession.IsSupported(Algorithm))
            throw new NotSupportedException($"{Algorithm} is not supported here.");
        var secret = SecureUdpSession.NewSecret();
        _sender = new SecureUdpSession(secret, "bench"u8, SecureUdpRole.Initiator, 1, 2, Algorithm);
        _receiver = new SecureUdpSession(secret, "bench"u8, SecureUdpRole.Responder, 2, 1, Algorithm);
        _aes = new AesGcm(RandomNumberGenerator.GetBytes(32), 16);
        RandomNumberGenerator.Fill(_payload);

        // Check one round before measuring.
        if (SealAndOpen() != SecureDatagramStatus.Ok)
            throw new InvalidOperationException("The datagram did not open.");
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        _sender.Dispose();
        _receiver.Dispose();
        _aes.Dispose();
    }

    [Benchmark(Baseline = true)]
    public void PlatformAesGcmEncrypt() =>
        _aes.Encrypt(_nonce, _payload.AsSpan(0, Size), _datagram.AsSpan(14, Size), _tag, _datagram.AsSpan(0, 14));

    [Benchmark]
    public int Seal() => _sender.Seal(SecureDatagramType.Data, _payload.AsSpan(0, Size), _datagram);

    [Benchmark]
    public SecureDatagramStatus SealAndOpen()
    {
        var length = _sender.Seal(SecureDatagramType.Data, _payload.AsSpan(0, Size), _datagram);
        return _receiver.Open(_datagram.AsSpan(0, length), out _, out _);
    }
}
