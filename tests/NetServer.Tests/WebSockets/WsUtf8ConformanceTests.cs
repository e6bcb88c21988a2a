using System;
using System.Buffers;
using System.Collections.Generic;
using System.Linq;
using System.Text;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.WebSockets;

/// <summary>
/// Autobahn group 6 (UTF-8 handling) against our WsServer, driven by a raw client: the whole 6.x
/// sample list (valid text echoed, invalid text closed with 1007), sent in one frame and one byte
/// per frame, and the fail-fast cases, where the close must come before the message is finished.
/// </summary>
public sealed class WsUtf8ConformanceTests
{
    public enum Delivery
    {
        /// <summary>One text frame.</summary>
        Whole,

        /// <summary>One payload byte per frame (a text frame, then continuations).</summary>
        ByteFrames,

        /// <summary>An unfinished message (FIN clear) that stops at the first byte that cannot be valid: the close may not wait for more.</summary>
        FailFast,
    }

    /// <summary>Autobahn case, payload (hex), valid.</summary>
    private static IEnumerable<(string Case, string Hex, bool Valid)> Samples()
    {
        static string H(string text) => Convert.ToHexString(Encoding.UTF8.GetBytes(text));
        yield return ("6.2", H("Hello-µ@ßöäüàá-UTF-8!!"), true);
        yield return ("6.3.1", "cebae1bdb9cf83cebcceb5eda080656469746564", false);
        yield return ("6.5.1 κόσμε", "cebae1bdb9cf83cebcceb5", true);
        yield return ("6.5 κόσμε among ASCII", H("a κόσμε b"), true);

        // 6.6: every prefix of κόσμε (ce ba e1 bd b9 cf 83 ce bc ce b5): valid only on a character boundary.
        var kosme = Convert.FromHexString("cebae1bdb9cf83cebcceb5");
        int[] boundaries = [2, 5, 7, 9, 11];
        for (var length = 1; length <= kosme.Length; length++)
            yield return ($"6.6.{length}", Convert.ToHexString(kosme, 0, length), boundaries.Contains(length));

        // 6.7-6.11: boundary conditions.
        foreach (var hex in new[] { "00", "c280", "e0a080", "f0908080" })
            yield return ("6.7 first of its length", hex, true);
        foreach (var hex in new[] { "f888808080", "fc8480808080" })
            yield return ("6.8 first 5/6-byte", hex, false);
        foreach (var hex in new[] { "7f", "dfbf", "efbfbf", "f48fbfbf" })
            yield return ("6.9 last of its length", hex, true);
        foreach (var hex in new[] { "f7bfbfbf", "fbbfbfbfbf", "fdbfbfbfbfbf" })
            yield return ("6.10 last 4/5/6-byte", hex, false);
        foreach (var hex in new[] { "ed9fbf", "ee8080", "efbfbd", "f48fbfbf" })
            yield return ("6.11 other boundary", hex, true);
        yield return ("6.11.5 past U+10FFFF", "f4908080", false);

        // 6.12: unexpected continuation bytes.
        foreach (var hex in new[] { "80", "bf", "80bf", "80bf80", "80bf80bf", "80bf80bf80", "80bf80bf80bf" })
            yield return ("6.12 continuation", hex, false);
        yield return ("6.12.8 all continuation bytes", Convert.ToHexString(Enumerable.Range(0x80, 64).Select(b => (byte)b).ToArray()), false);

        // 6.13: lonely start bytes, each followed by a space.
        yield return ("6.13.1 2-byte starts", Lonely(0xC0, 0xDF), false);
        yield return ("6.13.2 3-byte starts", Lonely(0xE0, 0xEF), false);
        yield return ("6.13.3 4-byte starts", Lonely(0xF0, 0xF7), false);
        yield return ("6.13.4 5-byte starts", Lonely(0xF8, 0xFB), false);
        yield return ("6.13.5 6-byte starts", Lonely(0xFC, 0xFD), false);

        // 6.14: the last continuation byte missing; 6.15: all of them in a row.
        string[] truncated = ["c0", "e080", "f08080", "f8808080", "fc80808080", "df", "efbf", "f7bfbf", "fbbfbfbf", "fdbfbfbfbf"];
        foreach (var hex in truncated)
            yield return ("6.14 last byte missing", hex, false);
        yield return ("6.15 concatenated", string.Concat(truncated), false);

        // 6.16: impossible bytes.
        foreach (var hex in new[] { "fe", "ff", "fefeffff" })
            yield return ("6.16 impossible", hex, false);

        // 6.17-6.19: overlong forms of '/', of the largest value of each length, of NUL.
        foreach (var hex in new[] { "c0af", "e080af", "f08080af", "f8808080af", "fc80808080af" })
            yield return ("6.17 overlong slash", hex, false);
        foreach (var hex in new[] { "c1bf", "e09fbf", "f08fbfbf", "f887bfbfbf", "fc83bfbfbfbf" })
            yield return ("6.18 maximum overlong", hex, false);
        foreach (var hex in new[] { "c080", "e08080", "f0808080", "f880808080", "fc8080808080" })
            yield return ("6.19 overlong NUL", hex, false);

        // 6.20, 6.21: UTF-16 surrogates, single and paired (U+D800-DFFF).
        foreach (var hex in new[] { "eda080", "edadbf", "edae80", "edafbf", "edb080", "edbe80", "edbfbf" })
            yield return ("6.20 single surrogate", hex, false);
        foreach (var hex in new[] { "eda080edb080", "eda080edbfbf", "edadbfedb080", "edadbfedbfbf", "edae80edb080", "edae80edbfbf", "edafbfedb080", "edafbfedbfbf" })
            yield return ("6.21 paired surrogates", hex, false);

        // 6.22: noncharacters are valid UTF-8 (U+FFFE, U+FFFF of every plane, U+FDD0-FDEF).
        for (var plane = 0; plane <= 16; plane++)
        {
            yield return ($"6.22 plane {plane} U+xFFFE", Rune(plane * 0x10000 + 0xFFFE), true);
            yield return ($"6.22 plane {plane} U+xFFFF", Rune(plane * 0x10000 + 0xFFFF), true);
        }

        yield return ("6.22 U+FDD0", Rune(0xFDD0), true);
        yield return ("6.22 U+FDEF", Rune(0xFDEF), true);

        // 6.23: the replacement character, alone and among others.
        foreach (var hex in new[] { "efbfbd", "61efbfbd", "61efbfbd62", "efbfbdefbfbd", "f09f8e89efbfbd" })
            yield return ("6.23 replacement", hex, true);

        // Beyond the list: the largest code point, and one past it in another form.
        yield return ("U+10FFFF", "f48fbfbf", true);
        yield return ("U+110000 as f4 90", "f49080", false);
    }

    private static string Lonely(int first, int last) =>
        Convert.ToHexString(Enumerable.Range(first, last - first + 1).SelectMany(b => new[] { (byte)b, (byte)' ' }).ToArray());

    private static string Rune(int value)
    {
        Span<byte> bytes = stackalloc byte[4];
        var length = new Rune(value).EncodeToUtf8(bytes);
        return Convert.ToHexString(bytes.Slice(0, length));
    }

    /// <summary>
    /// How many bytes of <paramref name="text"/> are needed to know it cannot be valid UTF-8: the
    /// shortest prefix that is not valid text followed by the start of a character (by the runtime's
    /// decoder, not ours); null when every prefix could still be the start of valid text.
    /// </summary>
    private static int? FirstImpossiblePrefix(byte[] text)
    {
        for (var length = 1; length <= text.Length; length++)
        {
            var prefix = text.AsSpan(0, length);
            while (!prefix.IsEmpty)
            {
                var status = System.Text.Rune.DecodeFromUtf8(prefix, out _, out var consumed);
                if (status == OperationStatus.InvalidData)
                    return length;
                if (status == OperationStatus.NeedMoreData)
                    break;
                prefix = prefix.Slice(consumed);
            }
        }

        return null;
    }

    public static TheoryData<string, string, bool, Delivery> Cases
    {
        get
        {
            var data = new TheoryData<string, string, bool, Delivery>();
            foreach (var (name, hex, valid) in Samples())
            {
                data.Add(name, hex, valid, Delivery.Whole);
                data.Add(name, hex, valid, Delivery.ByteFrames);
                if (!valid && FirstImpossiblePrefix(WsWire.Hex(hex)) is not null)
                    data.Add(name, hex, valid, Delivery.FailFast);
            }

            return data;
        }
    }

    [Theory]
    [MemberData(nameof(Cases))]
    public async Task Text_is_echoed_when_valid_UTF8_and_closed_with_1007_when_not(string name, string hex, bool valid, Delivery delivery)
    {
        var text = WsWire.Hex(hex);
        Assert.True(valid == IsValid(text), $"{name}: the sample's validity disagrees with the runtime's decoder.");
        byte[] bytes;
        switch (delivery)
        {
            case Delivery.Whole:
                bytes = WsWire.Frame(WsWire.Text, text);
                break;
            case Delivery.ByteFrames:
                bytes = WsWire.Concat([.. text.Select((b, i) => WsWire.Frame(i == 0 ? WsWire.Text : WsWire.Continuation, new[] { b }, fin: i == text.Length - 1))]);
                break;
            default:
                // Only the bytes up to the first that makes the text impossible, in a message that never ends.
                bytes = WsWire.Frame(WsWire.Text, text.AsSpan(0, FirstImpossiblePrefix(text)!.Value), fin: false);
                break;
        }

        await using var host = WsTestHost.Start();
        if (!valid)
        {
            await host.AssertFaultAsync(bytes, 1007);
            return;
        }

        using var client = await host.OpenAsync();
        await client.SendAsync(bytes);
        await client.ExpectMessageAsync(WsWire.Text, text);
        Assert.Empty(host.Log.Errors);
    }

    private static bool IsValid(byte[] text)
    {
        try
        {
            WsWire.StrictUtf8.GetString(text);
            return true;
        }
        catch (DecoderFallbackException)
        {
            return false;
        }
    }

    /// <summary>Autobahn 6.4.1-6.4.4: the close comes as soon as the invalid byte arrives, not at the end of the message.</summary>
    public static TheoryData<string, string[]> FailFastCases => new()
    {
        // 6.4.1: the invalid code point is a fragment of its own; the third fragment is never sent.
        { "6.4.1", ["cebae1bdb9cf83cebcceb5", "f4908080"] },
        // 6.4.2: the first fragment ends with f4 (a valid start); its second byte 90 is impossible.
        { "6.4.2", ["cebae1bdb9cf83cebcceb5f4", "90"] },
        // The invalid byte in the first fragment: nothing more is needed.
        { "first fragment", ["48656c6c6f20ff"] },
        // A surrogate split between fragments fails at its second byte.
        { "split surrogate", ["4142ed", "a0"] },
    };

    [Theory]
    [MemberData(nameof(FailFastCases))]
    public async Task Invalid_text_in_an_unfinished_message_closes_at_once(string name, string[] fragments)
    {
        await using var host = WsTestHost.Start();
        var frames = fragments.Select((hex, i) => WsWire.Frame(i == 0 ? WsWire.Text : WsWire.Continuation, WsWire.Hex(hex), fin: false)).ToArray();
        Assert.NotEmpty(name);
        await host.AssertFaultAsync(WsWire.Concat(frames), 1007);
    }

    [Theory]
    [InlineData(0)]
    [InlineData(1)]
    public async Task Invalid_text_in_a_frame_closes_before_the_rest_of_the_frame_arrives(int chunk)
    {
        // 6.4.3/6.4.4: one frame announcing 100 bytes, of which only the first 12 are sent, the last of them impossible.
        await using var host = WsTestHost.Start();
        var payload = new byte[100];
        Encoding.ASCII.GetBytes("Hello world").CopyTo(payload, 0);
        payload[11] = 0xC0;
        var frame = WsWire.Frame(WsWire.Text, payload);
        var headerLength = frame.Length - payload.Length;
        await host.AssertFaultAsync(frame.AsSpan(0, headerLength + 12).ToArray(), 1007, chunk);
    }

    public static TheoryData<string[]> SplitCodePoints => new()
    {
        { ["e2", "82ac"] },          // €
        { ["e282", "ac"] },
        { ["f0", "9f", "8e", "89"] }, // 🎉
        { ["48c3", "a9", "6c6c6f"] }, // Héllo
        { ["f48f", "bfbf"] },         // U+10FFFF
    };

    [Theory]
    [MemberData(nameof(SplitCodePoints))]
    public async Task A_code_point_split_across_fragments_is_valid(string[] fragments)
    {
        await using var host = WsTestHost.Start();
        using var client = await host.OpenAsync();
        var frames = fragments.Select((hex, i) => WsWire.Frame(i == 0 ? WsWire.Text : WsWire.Continuation, WsWire.Hex(hex), fin: i == fragments.Length - 1)).ToArray();
        await client.SendAsync(WsWire.Concat(frames));
        await client.ExpectMessageAsync(WsWire.Text, WsWire.Hex(string.Concat(fragments)));
        Assert.Empty(host.Log.Errors);
    }

    [Fact]
    public async Task A_message_whose_last_fragment_ends_inside_a_code_point_is_invalid()
    {
        await using var host = WsTestHost.Start();
        var bytes = WsWire.Concat(WsWire.Frame(WsWire.Text, WsWire.Hex("41e2"), fin: false), WsWire.Frame(WsWire.Continuation, WsWire.Hex("82")));
        await host.AssertFaultAsync(bytes, 1007);
    }

    public static TheoryData<TransportKind> Transports => WsTransports.All;

    [Theory]
    [MemberData(nameof(Transports))]
    public async Task Multi_byte_text_cut_at_random_points_in_frames_and_sends_is_valid(TransportKind kind)
    {
        // 1- to 4-byte characters, long ASCII runs between them (the validators' fast paths), cut
        // into fragments and sends at random byte positions, so code points split everywhere.
        var random = new Random(3629);
        var pieces = new[] { "a", "plain ascii run of some length, ", "é", "ß", "€", "☃", "κόσμε", "🎉", "\U0010FFFF", "\uFFFD", "\uFDD0" };
        var builder = new StringBuilder();
        while (builder.Length < 200_000)
            builder.Append(pieces[random.Next(pieces.Length)]);
        var text = Encoding.UTF8.GetBytes(builder.ToString());

        await using var host = WsTestHost.Start(kind);
        using var client = await host.OpenAsync();
        for (var round = 0; round < 3; round++)
        {
            var frames = new List<byte[]>();
            for (var at = 0; at < text.Length;)
            {
                var length = Math.Min(round == 0 ? text.Length : random.Next(0, round == 1 ? 9 : 20000), text.Length - at);
                frames.Add(WsWire.Frame(at == 0 ? WsWire.Text : WsWire.Continuation, text.AsSpan(at, length), fin: at + length == text.Length));
                at += length;
            }

            var bytes = WsWire.Concat([.. frames]);
            var receiving = client.ExpectMessageAsync(WsWire.Text, text);
            for (var at = 0; at < bytes.Length;)
            {
                var piece = Math.Min(random.Next(1, 5000), bytes.Length - at);
                await client.SendAsync(bytes.AsSpan(at, piece).ToArray());
                at += piece;
            }

            await receiving;
        }

        Assert.Empty(host.Log.Errors);
    }

    [Fact]
    public async Task Binary_messages_are_not_checked_as_text()
    {
        await using var host = WsTestHost.Start();
        using var client = await host.OpenAsync();
        var bytes = WsWire.Hex("fffec0afeda080f4908080");
        await client.SendAsync(WsWire.Frame(WsWire.Binary, bytes));
        await client.ExpectMessageAsync(WsWire.Binary, bytes);
    }
}
