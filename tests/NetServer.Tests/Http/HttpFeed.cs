using System;
using System.Collections.Generic;
using System.Linq;
using System.Text;
using NetServer.Http;
using Xunit;

namespace NetServer.Tests.Http;

/// <summary>What one parse of a head came to, as plain values that compare by content.</summary>
internal sealed record HeadOutcome(
    HttpParseStatus Status,
    int ErrorStatus,
    int Consumed,
    string Method,
    string Target,
    int MinorVersion,
    int ResponseStatus,
    string Reason,
    string Headers,
    HttpBodyFraming Framing,
    long ContentLength,
    bool CloseAfter,
    bool ExpectContinue,
    bool IsUpgrade);

/// <summary>What one read of a body came to.</summary>
internal sealed record BodyOutcome(HttpBodyStatus Status, int ErrorStatus, string Body, string Trailers, int Consumed);

/// <summary>
/// Feeds raw bytes to the parsers the way a connection does (all unconsumed bytes every time, new
/// ones appended) in three ways: in one piece, one byte at a time, and in seeded random splits;
/// asserts that all three come to the same outcome and returns it.
/// </summary>
internal static class HttpFeed
{
    private static readonly int[] s_seeds = [1, 2, 3];

    /// <summary>Latin-1: one byte per char, so tests can write any byte as \xNN or \0.</summary>
    public static byte[] Bytes(string text) => Encoding.Latin1.GetBytes(text);

    public static string Text(ReadOnlySpan<byte> bytes) => Encoding.Latin1.GetString(bytes);

    public static HeadOutcome Request(string raw, HttpLimits? limits = null) =>
        Request(Bytes(raw), limits ?? new HttpLimits());

    public static HeadOutcome Request(byte[] bytes, HttpLimits limits) =>
        AllWays(bytes, cuts => ParseHead(bytes, cuts, (ref HttpHeadParser p, ReadOnlySpan<byte> input, HttpHead head, out int consumed) =>
            p.ParseRequestHead(input, limits, head, out consumed)));

    public static HeadOutcome Response(string raw, bool requestWasHead = false, HttpLimits? limits = null)
    {
        var bytes = Bytes(raw);
        limits ??= new HttpLimits();
        return AllWays(bytes, cuts => ParseHead(bytes, cuts, (ref HttpHeadParser p, ReadOnlySpan<byte> input, HttpHead head, out int consumed) =>
            p.ParseResponseHead(input, requestWasHead, limits, head, out consumed)));
    }

    public static BodyOutcome Body(string raw, HttpBodyFraming framing, long contentLength = -1, long? maxBodySize = null, HttpLimits? limits = null)
    {
        var bytes = Bytes(raw);
        limits ??= new HttpLimits();
        return AllWays(bytes, cuts => ReadBody(bytes, cuts, framing, contentLength, maxBodySize, limits));
    }

    /// <summary>Runs <paramref name="run"/> over the three kinds of cuts and checks they agree.</summary>
    public static T AllWays<T>(byte[] bytes, Func<IEnumerable<int>, T> run)
    {
        var whole = run([bytes.Length]);
        Assert.Equal(whole, run(Enumerable.Repeat(1, bytes.Length)));
        foreach (var seed in s_seeds)
            Assert.Equal(whole, run(RandomCuts(bytes.Length, seed)));
        return whole;
    }

    /// <summary>Piece lengths adding up to <paramref name="length"/>: mostly short, sometimes long.</summary>
    public static IEnumerable<int> RandomCuts(int length, int seed)
    {
        var random = new Random(seed);
        var left = length;
        while (left > 0)
        {
            var piece = Math.Min(left, random.Next(4) == 0 ? random.Next(1, 200) : random.Next(1, 8));
            left -= piece;
            yield return piece;
        }
    }

    public delegate HttpParseStatus HeadParse(ref HttpHeadParser parser, ReadOnlySpan<byte> input, HttpHead head, out int consumed);

    private static HeadOutcome ParseHead(byte[] bytes, IEnumerable<int> cuts, HeadParse parse)
    {
        var parser = default(HttpHeadParser);
        var head = new HttpHead();
        var available = 0;
        var status = HttpParseStatus.NeedMoreData;
        var consumed = 0;
        foreach (var cut in cuts)
        {
            available += cut;
            status = parse(ref parser, bytes.AsSpan(0, available), head, out consumed);
            if (status != HttpParseStatus.NeedMoreData)
                break;
            Assert.Equal(0, consumed);
        }

        if (status == HttpParseStatus.Error)
        {
            Assert.False(parser.Error.IsNone);
            Assert.False(string.IsNullOrEmpty(parser.Error.Reason));
            return new HeadOutcome(status, parser.Error.Status, consumed, "", "", 0, 0, "", "", default, 0, false, false, false);
        }

        Assert.True(parser.Error.IsNone);
        if (status == HttpParseStatus.NeedMoreData)
            return new HeadOutcome(status, 0, 0, "", "", 0, 0, "", "", default, 0, false, false, false);
        return Snapshot(status, consumed, head, bytes.AsSpan(0, consumed));
    }

    public static HeadOutcome Snapshot(HttpParseStatus status, int consumed, HttpHead head, ReadOnlySpan<byte> headBytes)
    {
        Assert.Equal(consumed, head.Length);
        var headers = new StringBuilder();
        foreach (var field in head.Headers)
            headers.Append(Text(field.Name.Of(headBytes))).Append('=').Append(Text(field.Value.Of(headBytes))).Append('\n');
        return new HeadOutcome(
            status, 0, consumed,
            Text(head.Method.Of(headBytes)), Text(head.Target.Of(headBytes)), head.MinorVersion,
            head.Status, Text(head.Reason.Of(headBytes)), headers.ToString(),
            head.Framing, head.ContentLength, head.CloseAfter, head.ExpectContinue, head.IsUpgrade);
    }

    private static BodyOutcome ReadBody(byte[] bytes, IEnumerable<int> cuts, HttpBodyFraming framing, long contentLength, long? maxBodySize, HttpLimits limits)
    {
        var trailers = new HttpHead();
        var reader = new HttpBodyReader(framing, contentLength, maxBodySize, limits, trailers);
        var body = new StringBuilder();
        var start = 0;
        var available = 0;
        var status = HttpBodyStatus.NeedMoreData;
        using var pieces = cuts.GetEnumerator();
        var more = true;
        while (true)
        {
            // Read until the reader wants more bytes, then append the next piece.
            status = reader.Read(bytes.AsSpan(start, available - start), out var data, out var consumed);
            Assert.InRange(consumed, 0, available - start);
            if (status == HttpBodyStatus.Data)
            {
                Assert.False(data.IsEmpty);
                body.Append(Text(data));
            }
            else if (status == HttpBodyStatus.Done)
            {
                var fields = new StringBuilder();
                foreach (var field in trailers.Headers)
                    fields.Append(Text(field.Name.Of(data))).Append('=').Append(Text(field.Value.Of(data))).Append('\n');
                start += consumed;
                Assert.True(reader.IsDone);
                return new BodyOutcome(status, 0, body.ToString(), fields.ToString(), start);
            }
            else if (status == HttpBodyStatus.Error)
            {
                return new BodyOutcome(status, reader.Error.Status, body.ToString(), "", start + consumed);
            }

            start += consumed;
            if (status == HttpBodyStatus.NeedMoreData)
            {
                if (!more || !(more = pieces.MoveNext()))
                    return new BodyOutcome(status, 0, body.ToString(), "", start);
                available += pieces.Current;
            }
        }
    }
}
