using System;
using System.IO;
using System.Net;
using NetServer.P2P.Wire;
using NetServer.P2P.Wire.Contracts;
using NetServer.Protobuf;
using ProtoBuf;

namespace NetServer.Fuzz;

/// <summary>What a relay reads from its peers: the envelopes it routes and its control messages.</summary>
internal static class RelayTargets
{
    private static readonly Guid s_sender = new("0b7e1b1e-5e4d-4c3b-9a2f-00000000000a");
    private static readonly byte[] s_fromField = EnvelopeRewriter.FromFieldOf(s_sender);

    /// <summary>
    /// An envelope the relay accepts (it parses) is routed with the sender's true id as its only
    /// From, within the size promised, every other field unchanged, the same bytes whether the fields
    /// are walked or copied around the From range the parse found; a malformed one is refused
    /// or rewritten within bounds, never read past its end.
    /// </summary>
    public static void Envelope(ReadOnlySpan<byte> input)
    {
        var destination = new byte[EnvelopeRewriter.MaxRewrittenLength(input.Length)];
        var length = EnvelopeRewriter.Rewrite(input, s_fromField, destination);
        Invariant.Check(length <= destination.Length, "a rewritten envelope fits the size promised");
        if (!ProtoMessage.TryParse(input, out var original, out _))
            return;
        Invariant.Check(length >= 0, "an envelope that parses is rewritten");
        var copied = new byte[destination.Length];
        var copiedLength = EnvelopeRewriter.Rewrite(input, s_fromField, copied, EnvelopeRewriter.RangeOf(in original));
        Invariant.Check(destination.AsSpan(0, length).SequenceEqual(copied.AsSpan(0, Math.Max(copiedLength, 0))), "the copy around the parsed From range writes what the walk writes");
        Invariant.Check(ProtoMessage.TryParse(destination.AsSpan(0, length), out var routed, out var error), $"a rewritten envelope parses: {error}");
        Invariant.Check(routed.From == s_sender, "the relay's From is the only From");
        Invariant.Check(routed.Id == original.Id && routed.To == original.To && routed.HeaderUtf8.SequenceEqual(original.HeaderUtf8)
            && routed.Timestamp == original.Timestamp && routed.RequestId == original.RequestId && routed.Flags == original.Flags
            && routed.PropertyCount == original.PropertyCount && routed.Payload.SequenceEqual(original.Payload), "every other field routed unchanged");
    }

    /// <summary>
    /// The first byte picks a control message; the rest is its protobuf body: it reads, or fails with
    /// protobuf-net's exception (the relay answers InvalidRequest), never anything else. An endpoint
    /// in a UDP control datagram reads back as itself once written.
    /// </summary>
    public static void Control(ReadOnlySpan<byte> input)
    {
        if (input.IsEmpty)
            return;
        var body = input.Slice(1).ToArray();
        try
        {
            object message = (input[0] % 4) switch
            {
                0 => Serializer.Deserialize<RegisterMessage>((ReadOnlySpan<byte>)body),
                1 => Serializer.Deserialize<RoomMessage>((ReadOnlySpan<byte>)body),
                2 => Serializer.Deserialize<UdpPairRequestMessage>((ReadOnlySpan<byte>)body),
                _ => Serializer.Deserialize<PunchOfferMessage>((ReadOnlySpan<byte>)body),
            };
            Invariant.Check(message is not null, "a control message reads as one");
        }
        catch (Exception e) when (e is ProtoException or EndOfStreamException or InvalidOperationException or OverflowException or ArgumentException)
        {
        }

        if (UdpFraming.TryReadEndpoint(body, out var endpoint) && endpoint is not null)
        {
            Span<byte> written = stackalloc byte[19];
            var length = UdpFraming.WriteEndpoint(written, endpoint);
            var expected = endpoint.Address.IsIPv4MappedToIPv6 ? new IPEndPoint(endpoint.Address.MapToIPv4(), endpoint.Port) : endpoint;
            Invariant.Check(length > 0 && UdpFraming.TryReadEndpoint(written.Slice(0, length), out var again) && expected.Equals(again), "an endpoint reads back as itself");
        }
    }
}
