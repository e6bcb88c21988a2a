using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using Xunit;

namespace NetServer.Fuzz.Tests;

/// <summary>
/// Every fuzz target over its seed corpus (tests/NetServer.Fuzz/corpus/TARGET, findings kept there
/// as regressions), then over seeded mutations of it: the fast, AFL-free part of fuzzing that runs
/// with every test run (build/fuzz.sh runs the real thing).
/// </summary>
public sealed class CorpusReplayTests
{
    private const int MutationsPerTarget = 1500;

    public static TheoryData<string> Targets() => new(FuzzTarget.All.Select(t => t.Name));

    [Theory]
    [MemberData(nameof(Targets))]
    public void Every_corpus_input_keeps_the_rules(string name)
    {
        var target = FuzzTarget.Find(name)!;
        var corpus = Corpus(name);
        Assert.True(corpus.Count >= 5, $"{name} has a seed corpus of at least 5 inputs ({corpus.Count})");
        foreach (var (file, bytes) in corpus)
            Run(target, bytes, file);
    }

    [Theory]
    [MemberData(nameof(Targets))]
    public void Mutations_of_the_corpus_keep_the_rules(string name)
    {
        var target = FuzzTarget.Find(name)!;
        var corpus = Corpus(name).Select(c => c.Bytes).ToArray();
        var random = new Random(name.Length * 7919);
        for (var i = 0; i < MutationsPerTarget; i++)
            Run(target, Mutate(corpus, random), $"mutation {i}");
    }

    private static void Run(FuzzTarget target, byte[] input, string what)
    {
        try
        {
            target.Run(input);
        }
        catch (Exception e)
        {
            Assert.Fail($"{target.Name}, {what} ({Convert.ToHexString(input)}): {e.GetType().Name}: {e.Message}");
        }
    }

    private static List<(string File, byte[] Bytes)> Corpus(string name) =>
        Directory.GetFiles(Path.Combine(AppContext.BaseDirectory, "corpus", name)).Order()
            .Select(f => (Path.GetFileName(f), File.ReadAllBytes(f))).ToList();

    // AFL's cheap mutations: bit flips, byte sets (to the values parsers care about), inserts,
    // deletes, duplicated runs and splices of two inputs.
    private static byte[] Mutate(byte[][] corpus, Random random)
    {
        var bytes = new List<byte>(corpus[random.Next(corpus.Length)]);
        var interesting = new byte[] { 0, 1, 0x7F, 0x80, 0xFF, (byte)'\r', (byte)'\n', (byte)' ', (byte)':', (byte)';', (byte)'%', (byte)'.', (byte)'/', (byte)'0', (byte)'9', (byte)'F' };
        for (var n = random.Next(1, 5); n > 0; n--)
        {
            var at = bytes.Count == 0 ? 0 : random.Next(bytes.Count);
            switch (random.Next(6))
            {
                case 0 when bytes.Count > 0: bytes[at] ^= (byte)(1 << random.Next(8)); break;
                case 1 when bytes.Count > 0: bytes[at] = interesting[random.Next(interesting.Length)]; break;
                case 2: bytes.Insert(at, interesting[random.Next(interesting.Length)]); break;
                case 3 when bytes.Count > 0: bytes.RemoveRange(at, Math.Min(bytes.Count - at, random.Next(1, 8))); break;
                case 4 when bytes.Count > 0: bytes.InsertRange(at, bytes.GetRange(at, Math.Min(bytes.Count - at, random.Next(1, 16)))); break;
                case 5:
                    var other = corpus[random.Next(corpus.Length)];
                    bytes.RemoveRange(at, bytes.Count - at);
                    bytes.AddRange(other.Skip(random.Next(other.Length + 1)));
                    break;
            }
        }

        return bytes.ToArray();
    }
}
