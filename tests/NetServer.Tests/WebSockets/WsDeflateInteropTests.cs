using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.Linq;
using System.Text;
using System.Threading.Tasks;
using NetServer.WebSockets;
using Xunit;

namespace NetServer.Tests.WebSockets;

/// <summary>
/// Our permessage-deflate against an independent implementation: python3's zlib (madler's zlib,
/// where .NET 10 uses zlib-ng), message by message, with and without context takeover, and with
/// the smaller windows a peer may compress with.
/// </summary>
public class WsDeflateInteropTests
{
    // Reads whitespace-separated words: a command, its arguments, then messages in hex ("-" for none).
    // "inflate takeover|reset": inflates each message with 00 00 FF FF put back, one decompressor
    //   for all (takeover) or a fresh one each (reset).
    // "deflate WBITS LEVEL takeover|reset": compresses each message with a sync flush, checks the
    //   marker and removes it.
    private const string Script = """
        import sys, zlib
        words = sys.stdin.read().split()
        unhex = lambda s: b"" if s == "-" else bytes.fromhex(s)
        tohex = lambda b: b.hex() or "-"
        tail = b"\x00\x00\xff\xff"
        out = []
        if words[0] == "inflate":
            reset = words[1] == "reset"
            d = zlib.decompressobj(-15)
            for h in words[2:]:
                if reset:
                    d = zlib.decompressobj(-15)
                out.append(tohex(d.decompress(unhex(h) + tail)))
        else:
            wbits, level, reset = int(words[1]), int(words[2]), words[3] == "reset"
            new = lambda: zlib.compressobj(level, zlib.DEFLATED, -wbits)
            c = new()
            for h in words[4:]:
                if reset:
                    c = new()
                m = c.compress(unhex(h)) + c.flush(zlib.Z_SYNC_FLUSH)
                assert m.endswith(tail), m.hex()
                out.append(tohex(m[:-4]))
        sys.stdout.write("\n".join(out) + "\n")
        """;

    private static List<byte[]> Messages()
    {
        var random = new Random(42);
        var text = Encoding.ASCII.GetBytes(string.Concat(Enumerable.Range(0, 4000).Select(i => $"{{\"id\":{i},\"name\":\"user{i % 50}\",\"ok\":{(i % 3 == 0 ? "true" : "false")}}},")));
        var noise = new byte[200_000];
        random.NextBytes(noise);
        return
        [
            [],
            [(byte)'x'],
            text.AsSpan(0, 125).ToArray(),
            text.AsSpan(0, 5000).ToArray(),
            text.AsSpan(5000, 5000).ToArray(),
            text,
            noise,
            [],
            text.AsSpan(0, 5000).ToArray(),
            text.AsSpan(0, 5000).ToArray(),
        ];
    }

    private static string Hex(ReadOnlySpan<byte> bytes) => bytes.IsEmpty ? "-" : Convert.ToHexString(bytes);

    private static byte[] Unhex(string hex) => hex == "-" ? [] : Convert.FromHexString(hex);

    private static async Task<string[]> RunPythonAsync(string command, IEnumerable<string> messages)
    {
        var start = new ProcessStartInfo("python3", ["-c", Script])
        {
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        using var python = Process.Start(start)!;
        try
        {
            var output = python.StandardOutput.ReadToEndAsync();
            var errors = python.StandardError.ReadToEndAsync();
            await python.StandardInput.WriteAsync(command + "\n" + string.Join("\n", messages) + "\n");
            python.StandardInput.Close();
            await python.WaitForExitAsync().WaitAsync(TimeSpan.FromSeconds(60));
            Assert.True(python.ExitCode == 0, "python3 failed: " + await errors);
            return (await output).Split('\n', StringSplitOptions.RemoveEmptyEntries);
        }
        finally
        {
            if (!python.HasExited)
                python.Kill();
        }
    }

    [PythonZlibFact]
    public async Task Python_zlib_inflates_what_we_compress_with_context_takeover()
    {
        var messages = Messages();
        using var deflater = new WsDeflater(System.IO.Compression.CompressionLevel.Fastest, resetPerMessage: false);
        var compressed = messages.Select(m => Hex(deflater.Compress(m))).ToList();

        var inflated = await RunPythonAsync("inflate takeover", compressed);
        Assert.Equal(messages.Count, inflated.Length);
        for (var i = 0; i < messages.Count; i++)
            Assert.True(messages[i].AsSpan().SequenceEqual(Unhex(inflated[i])), $"message {i} ({messages[i].Length} bytes) differs");

        // Message 8 follows random bytes that filled the window; message 9 repeats it and is sent
        // mostly as references to it (Fastest finds shorter matches than Optimal: about a third).
        Assert.True(compressed[9].Length < compressed[8].Length / 2, $"{compressed[8].Length / 2} then {compressed[9].Length / 2} bytes");
    }

    [PythonZlibFact]
    public async Task Python_zlib_inflates_each_message_alone_when_we_reset()
    {
        var messages = Messages();
        using var deflater = new WsDeflater(System.IO.Compression.CompressionLevel.Optimal, resetPerMessage: true);
        var compressed = messages.Select(m => Hex(deflater.Compress(m))).ToList();

        var inflated = await RunPythonAsync("inflate reset", compressed);
        Assert.Equal(messages.Count, inflated.Length);
        for (var i = 0; i < messages.Count; i++)
            Assert.True(messages[i].AsSpan().SequenceEqual(Unhex(inflated[i])), $"message {i} ({messages[i].Length} bytes) differs");
    }

    [PythonZlibFact]
    public async Task We_inflate_what_python_zlib_compresses_with_any_window_and_level()
    {
        var messages = Messages();
        foreach (var (windowBits, level, reset) in new[] { (15, 6, false), (15, 9, false), (15, 1, true), (12, 6, false), (9, 9, false), (9, 1, true) })
        {
            var compressed = await RunPythonAsync(
                string.Create(CultureInfo.InvariantCulture, $"deflate {windowBits} {level} {(reset ? "reset" : "takeover")}"),
                messages.Select(m => Hex(m)));
            Assert.Equal(messages.Count, compressed.Length);

            using var inflater = new WsInflater(1 << 20, reset);
            for (var i = 0; i < messages.Count; i++)
            {
                // Each message in two frames, split in the middle.
                var bytes = Unhex(compressed[i]);
                Assert.True(inflater.Append(bytes.AsSpan(0, bytes.Length / 2)), inflater.Error);
                Assert.True(inflater.Append(bytes.AsSpan(bytes.Length / 2)), inflater.Error);
                Assert.True(inflater.Finish(out var message), inflater.Error);
                Assert.True(messages[i].AsSpan().SequenceEqual(message), $"window {windowBits}, level {level}: message {i} ({messages[i].Length} bytes) differs");
            }
        }
    }
}
