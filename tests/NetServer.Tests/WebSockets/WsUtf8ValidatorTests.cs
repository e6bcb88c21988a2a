using System;
using System.Collections.Generic;
using System.Linq;
using System.Text;
using NetServer.WebSockets;
using Xunit;

namespace NetServer.Tests.WebSockets;

/// <summary>
/// The incremental UTF-8 validator: the samples of the Autobahn testsuite's case 6 (after Markus
/// Kuhn's UTF-8 decoder stress test), each fed whole, byte by byte and in random splits, with the
/// exact byte where an invalid one must fail; ASCII runs with a bad byte at every position around
/// the vector widths; and random byte strings against the runtime's decoders.
/// </summary>
public sealed class WsUtf8ValidatorTests
{
    private static readonly UTF8Encoding s_strict = new(encoderShouldEmitUTF8Identifier: false, throwOnInvalidBytes: true);
    private static readonly int[] s_seeds = [1, 2, 3, 4];

    private static byte[] Hex(string hex) => Convert.FromHexString(hex.Replace(" ", "", StringComparison.Ordinal));

    public static TheoryData<string> ValidSamples => new()
    {
        "",
        "00",
        "7f",
        "68656c6c6f",                            // hello
        "68656c6c6f 24 776f726c64",              // hello$world
        "68656c6c6f c2a2 776f726c64",            // U+00A2
        "68656c6c6f e282ac 776f726c64",          // U+20AC
        "68656c6c6f f0a4ada2 776f726c64",        // U+24B62
        "ceba e1bdb9 cf83 cebc ceb5",            // κόσμε
        "c280", "dfbf",                          // first and last two-byte forms
        "e0a080", "efbfbf",                      // first three-byte form, U+FFFF
        "f0908080", "f48fbfbf",                  // first four-byte form, U+10FFFF
        "ed9fbf", "ee8080", "efbfbd",            // around the surrogates, U+FFFD
        "efbfbe", "f09fbfbe", "f18fbfbf", "f3bfbfbe", "f48fbfbe", // non-characters are valid UTF-8
        "efbfb9 efbfba efbfbb efbfbc",           // specials
        "c2a9 e282ac f09f9880 41 e4b8ad e69687", // mixed widths back to back
    };

    // Invalid samples and the index of the byte at which the bytes so far stop being a prefix of valid UTF-8.
    public static TheoryData<string, int> InvalidSamples => new()
    {
        { "80", 0 }, { "bf", 0 }, { "80bf", 0 }, { "80bf80bf80bf", 0 },        // unexpected continuation bytes
        { "c0", 0 }, { "c1bf", 0 }, { "c0af", 0 }, { "c080", 0 },              // overlong two-byte forms fail at the lead
        { "c020", 0 }, { "df20", 1 }, { "e020", 1 }, { "f020", 1 },            // lonely start characters
        { "f5", 0 }, { "f7bfbfbf", 0 }, { "f888808080", 0 }, { "fc8480808080", 0 }, { "fdbfbfbfbfbf", 0 },
        { "fe", 0 }, { "ff", 0 }, { "fefeffff", 0 },                           // impossible bytes
        { "e080af", 1 }, { "e09fbf", 1 }, { "e08080", 1 },                     // overlong three-byte forms
        { "f08080af", 1 }, { "f08fbfbf", 1 }, { "f0808080", 1 },               // overlong four-byte forms
        { "f4908080", 1 }, { "f4bfbfbf", 1 },                                  // past U+10FFFF
        { "eda080", 1 }, { "edadbf", 1 }, { "edb080", 1 }, { "edbfbf", 1 },    // single surrogates
        { "eda080edb080", 1 }, { "edafbfedbfbf", 1 },                          // paired surrogates
        { "656469746564 eda080", 7 },                                          // Autobahn 6.4.x: "edited" then a surrogate
        { "ceba e1bdb9 cf83 cebc ceb5 eda080 656469746564", 12 },
        { "c241", 1 }, { "e28241", 2 }, { "f0a4ad41", 3 },                     // a sequence cut by ASCII
        { "e282c2a2", 2 }, { "f0a4f0a4ada2", 2 },                              // cut by a new lead byte
        { "c0 e080 f08080 f8808080 fc80808080 df efbf f7bfbf fbbfbfbf fdbfbfbfbf", 0 }, // concatenated incomplete sequences
        { "41 c2a2 e282ac f0a4ada2 80", 10 },
    };

    // Valid prefixes that stop inside a code point: a message may not end there.
    public static TheoryData<string> TruncatedSamples => new()
    {
        "c2", "df", "e0", "e0a0", "e282", "ed9f", "ef bf", "f0", "f090", "f09080", "f48f", "f48fbf",
        "68656c6c6f e282", "ceba e1bd",
    };

    // Feeds every byte on its own; returns the index of the call that returned false, or -1.
    private static int FailIndexByteByByte(byte[] bytes, out WsUtf8Validator validator)
    {
        validator = default;
        var failed = -1;
        for (var i = 0; i < bytes.Length; i++)
        {
            var ok = validator.Append(bytes.AsSpan(i, 1));
            if (!ok && failed < 0)
                failed = i;
            Assert.Equal(failed < 0, ok); // once failed, it stays failed
        }

        return failed;
    }

    // Feeds random pieces (empty ones included); returns the range of the piece whose call returned false.
    private static (int Start, int End) FailPieceInRandomSplits(byte[] bytes, int seed, out WsUtf8Validator validator)
    {
        var random = new Random(seed);
        validator = default;
        for (var at = 0; at <= bytes.Length;)
        {
            var piece = Math.Min(bytes.Length - at, random.Next(3) == 0 ? random.Next(0, 80) : random.Next(0, 5));
            if (!validator.Append(bytes.AsSpan(at, piece)))
                return (at, at + piece);
            at += piece;
            if (at == bytes.Length)
                break;
        }

        return (-1, -1);
    }

    // Where a reference decoder says the bytes stop being a prefix of valid UTF-8 (-1: never), and
    // whether they end inside a code point. Rune.DecodeFromUtf8 reports the maximal invalid
    // subpart: a bad lead byte alone (failing at itself), or a valid start failing at the byte after it.
    private static int ReferenceFailIndex(ReadOnlySpan<byte> bytes, out bool truncated)
    {
        truncated = false;
        for (var i = 0; i < bytes.Length;)
        {
            var status = System.Text.Rune.DecodeFromUtf8(bytes.Slice(i), out _, out var consumed);
            if (status == System.Buffers.OperationStatus.Done)
            {
                i += consumed;
                continue;
            }

            if (status == System.Buffers.OperationStatus.NeedMoreData)
            {
                truncated = true;
                return -1;
            }

            return bytes[i] is >= 0xC2 and <= 0xF4 ? i + consumed : i;
        }

        return -1;
    }

    [Theory]
    [MemberData(nameof(ValidSamples))]
    public void Valid_text_passes_whole_byte_by_byte_and_in_random_splits(string hex)
    {
        var bytes = Hex(hex);
        Assert.True(WsUtf8Validator.IsValid(bytes));

        var validator = default(WsUtf8Validator);
        Assert.True(validator.Append(bytes));
        Assert.True(validator.IsComplete);

        // Byte by byte, complete exactly at code point boundaries.
        validator.Reset();
        for (var i = 0; i < bytes.Length; i++)
        {
            Assert.True(validator.Append(bytes.AsSpan(i, 1)));
            var boundary = i + 1 == bytes.Length || (bytes[i + 1] & 0xC0) != 0x80;
            Assert.Equal(boundary, validator.IsComplete);
        }

        foreach (var seed in s_seeds)
        {
            Assert.Equal((-1, -1), FailPieceInRandomSplits(bytes, seed, out validator));
            Assert.True(validator.IsComplete);
        }
    }

    [Theory]
    [MemberData(nameof(InvalidSamples))]
    public void Invalid_text_fails_at_the_first_byte_that_cannot_continue_valid_UTF8(string hex, int failAt)
    {
        var bytes = Hex(hex);
        Assert.Equal(failAt, ReferenceFailIndex(bytes, out _)); // the sample's index agrees with the runtime
        Assert.False(WsUtf8Validator.IsValid(bytes));

        var validator = default(WsUtf8Validator);
        Assert.False(validator.Append(bytes));
        Assert.True(validator.HasFailed);
        Assert.False(validator.IsComplete);

        Assert.Equal(failAt, FailIndexByteByByte(bytes, out validator));
        Assert.False(validator.Append("a"u8)); // stays failed
        Assert.False(validator.Append(default));

        foreach (var seed in s_seeds)
        {
            var (start, end) = FailPieceInRandomSplits(bytes, seed, out _);
            Assert.InRange(failAt, start, end - 1);
        }

        validator.Reset();
        Assert.False(validator.HasFailed);
        Assert.True(validator.Append("a"u8));
        Assert.True(validator.IsComplete);
    }

    [Theory]
    [MemberData(nameof(TruncatedSamples))]
    public void A_code_point_cut_short_is_a_valid_prefix_but_not_complete(string hex)
    {
        var bytes = Hex(hex);
        Assert.False(WsUtf8Validator.IsValid(bytes));

        var validator = default(WsUtf8Validator);
        Assert.True(validator.Append(bytes));
        Assert.False(validator.IsComplete);
        Assert.False(validator.HasFailed);

        Assert.Equal(-1, FailIndexByteByByte(bytes, out validator));
        Assert.False(validator.IsComplete);

        // A new lead byte instead of the missing continuation bytes fails at that byte.
        Assert.False(validator.Append("a"u8));
    }

    [Fact]
    public void A_split_code_point_completes_across_calls()
    {
        var bytes = Hex("f09f9880"); // U+1F600
        for (var cut = 0; cut <= bytes.Length; cut++)
        {
            var validator = default(WsUtf8Validator);
            Assert.True(validator.Append(bytes.AsSpan(0, cut)));
            Assert.Equal(cut is 0 or 4, validator.IsComplete);
            Assert.True(validator.Append(bytes.AsSpan(cut)));
            Assert.True(validator.IsComplete);
        }

        // The second byte's range (F0: 90..BF) still holds when the lead came in the previous call.
        var overlong = default(WsUtf8Validator);
        Assert.True(overlong.Append(Hex("41 42 f0")));
        Assert.False(overlong.Append(Hex("8f bf bf 43 44")));
    }

    [Theory]
    [InlineData("80", 0)]     // a continuation byte alone
    [InlineData("c0", 0)]     // a lead that can never be valid
    [InlineData("ff", 0)]
    [InlineData("eda0", 1)]   // a surrogate, failing at its second byte
    [InlineData("c3a9", -1)]  // é: valid
    [InlineData("f09f9880", -1)]
    public void A_bad_or_good_sequence_at_every_position_of_an_ASCII_run_is_judged_there(string hex, int failOffset)
    {
        var sequence = Hex(hex);
        for (var position = 0; position <= 70; position++)
        {
            foreach (var length in new[] { position + sequence.Length, position + sequence.Length + 1, 150 })
            {
                var bytes = Enumerable.Repeat((byte)'a', length).ToArray();
                sequence.CopyTo(bytes, position);
                var expectedFail = failOffset < 0 ? -1 : position + failOffset;

                var validator = default(WsUtf8Validator);
                Assert.Equal(failOffset < 0, validator.Append(bytes));
                Assert.Equal(failOffset < 0, WsUtf8Validator.IsValid(bytes));
                Assert.Equal(expectedFail, FailIndexByteByByte(bytes, out _));

                // In two pieces, cut at every point near the sequence: the call holding the bad byte fails.
                for (var cut = Math.Max(0, position - 2); cut <= Math.Min(length, position + sequence.Length + 1); cut++)
                {
                    validator.Reset();
                    var first = validator.Append(bytes.AsSpan(0, cut));
                    var second = validator.Append(bytes.AsSpan(cut));
                    Assert.Equal(expectedFail < 0 || expectedFail >= cut, first);
                    Assert.Equal(expectedFail < 0, second);
                    Assert.Equal(expectedFail < 0, validator.IsComplete);
                }
            }
        }
    }

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    public void Random_bytes_are_judged_as_the_runtime_decoders_judge_them(int seed)
    {
        var random = new Random(seed);
        var pieces = new[] { Hex("41"), Hex("c3a9"), Hex("e282ac"), Hex("f09f9880"), Hex("ed9fbf"), Hex("f48fbfbf") };
        for (var round = 0; round < 3000; round++)
        {
            // Mostly valid pieces with a random byte now and then, so failures come at all depths.
            var bytes = new List<byte>();
            var count = random.Next(0, 40);
            for (var i = 0; i < count; i++)
            {
                if (random.Next(12) == 0)
                    bytes.Add((byte)random.Next(256));
                else
                    bytes.AddRange(pieces[random.Next(pieces.Length)]);
            }

            var data = bytes.ToArray();
            bool strictValid;
            try
            {
                s_strict.GetCharCount(data);
                strictValid = true;
            }
            catch (DecoderFallbackException)
            {
                strictValid = false;
            }

            var failAt = ReferenceFailIndex(data, out var truncated);
            Assert.Equal(strictValid, failAt < 0 && !truncated);
            Assert.Equal(strictValid, WsUtf8Validator.IsValid(data));

            var validator = default(WsUtf8Validator);
            Assert.Equal(failAt < 0, validator.Append(data));
            Assert.Equal(strictValid, validator.IsComplete);
            Assert.Equal(failAt, FailIndexByteByByte(data, out _));
            var (start, end) = FailPieceInRandomSplits(data, seed * 10_000 + round, out validator);
            if (failAt < 0)
                Assert.Equal(strictValid, validator.IsComplete);
            else
                Assert.InRange(failAt, start, end - 1);
        }
    }

    [Fact]
    public void Appending_allocates_nothing()
    {
        var text = Encoding.UTF8.GetBytes(string.Concat(Enumerable.Repeat("Grüße, κόσμε, 世界 and plain ASCII 😀 ", 30)));
        var validator = default(WsUtf8Validator);
        var ok = true;
        void Round()
        {
            validator.Reset();
            ok &= validator.Append(text.AsSpan(0, 333)) && validator.Append(text.AsSpan(333)) && WsUtf8Validator.IsValid(text);
        }

        for (var i = 0; i < 100; i++)
            Round();

        // The least of three measures: a one-off allocation of the runtime on this thread while a
        // round runs (seen once in a full run, 4.5 KB) is not the validator's; one per round
        // would show in every measure.
        var least = long.MaxValue;
        for (var attempt = 0; attempt < 3 && least != 0; attempt++)
        {
            var before = GC.GetAllocatedBytesForCurrentThread();
            for (var i = 0; i < 1000; i++)
                Round();
            least = Math.Min(least, GC.GetAllocatedBytesForCurrentThread() - before);
        }

        Assert.Equal(0, least);
        Assert.True(ok);
        Assert.True(validator.IsComplete);
    }
}
