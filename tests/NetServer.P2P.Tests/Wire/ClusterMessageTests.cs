using System;
using System.Linq;
using NetServer.P2P.Wire;
using Xunit;

namespace NetServer.P2P.Tests.Wire;

/// <summary>The relay nodes' messages (docs/scale-out.md): each round-trips, and anything short, long or of another version is refused, never read past its end.</summary>
public sealed class ClusterMessageTests
{
    private static readonly RelayPeer s_alice = new(Guid.NewGuid(), "alice-é");
    private static readonly RelayPeer s_bob = new(Guid.NewGuid(), "");

    [Fact]
    public void Registry_messages_round_trip()
    {
        var joined = ClusterMessage.Joined(7, s_alice);
        Assert.True(ClusterMessage.TryReadKind(joined, out var kind));
        Assert.Equal(ClusterKind.Joined, kind);
        Assert.True(ClusterMessage.TryReadSeq(joined, out var seq, out var rest));
        Assert.True(ClusterMessage.TryReadPeer(ref rest, out var peer));
        Assert.Equal((7L, s_alice, 0), (seq, peer, rest.Length));

        var left = ClusterMessage.Left(8, s_bob.Id);
        Assert.True(ClusterMessage.TryReadSeq(left, out seq, out rest));
        Assert.True(ClusterMessage.TryReadId(rest, out var id));
        Assert.Equal((8L, s_bob.Id), (seq, id));

        var state = ClusterMessage.State(9, [s_alice, s_bob]);
        Assert.True(ClusterMessage.TryReadSeq(state, out seq, out rest));
        Assert.True(ClusterMessage.TryReadStateCount(ref rest, out var count));
        Assert.True(ClusterMessage.TryReadPeer(ref rest, out var first));
        Assert.True(ClusterMessage.TryReadPeer(ref rest, out var second));
        Assert.Equal((9L, 2, s_alice, s_bob, 0), (seq, count, first, second, rest.Length));
    }

    [Fact]
    public void Envelope_and_status_messages_round_trip()
    {
        var envelope = new byte[] { 1, 2, 3 };
        var message = new byte[ClusterMessage.EnvelopeHeaderSize + envelope.Length];
        ClusterMessage.WriteEnvelopeHeader(message, s_alice.Id, s_bob.Id, ClusterKind.RoomEnvelope);
        envelope.CopyTo(message, ClusterMessage.EnvelopeHeaderSize);
        Assert.True(ClusterMessage.TryReadKind(message, out var kind));
        Assert.True(ClusterMessage.TryReadEnvelope(message, out var from, out var to, out var body));
        Assert.Equal((ClusterKind.RoomEnvelope, s_alice.Id, s_bob.Id), (kind, from, to));
        Assert.Equal(envelope, body.ToArray());

        var status = ClusterMessage.Status(s_alice.Id, RelayStatus.UnexpectedReply, 42, s_bob.Id, Guid.Empty, "why");
        Assert.True(ClusterMessage.TryReadStatus(status, out var peer, out var code, out var request, out var messageId, out to, out var detail));
        Assert.Equal((s_alice.Id, RelayStatus.UnexpectedReply, 42UL, s_bob.Id, Guid.Empty, "why"), (peer, code, request, messageId, to, detail));
    }

    [Fact]
    public void Every_truncation_of_a_state_is_refused_and_another_version_is_not_read()
    {
        var state = ClusterMessage.State(3, [s_alice, s_bob]);
        for (var length = 0; length < state.Length; length++)
            Assert.False(ReadsWhole(state.AsSpan(0, length)), $"a state cut to {length} of {state.Length} bytes was taken");
        Assert.True(ReadsWhole(state));

        var other = state.ToArray();
        other[0] = 2;
        Assert.False(ClusterMessage.TryReadKind(other, out _));
        Assert.False(ClusterMessage.TryReadKind(state.AsSpan(0, 1), out _));
        Assert.False(ClusterMessage.TryReadEnvelope(new byte[ClusterMessage.EnvelopeHeaderSize - 1], out _, out _, out _));
        Assert.False(ClusterMessage.TryReadStatus(ClusterMessage.Status(s_alice.Id, RelayStatus.UnknownPeer, 0, Guid.Empty, Guid.Empty, "").AsSpan(0, 40).ToArray(), out _, out _, out _, out _, out _, out _));
    }

    private static bool ReadsWhole(ReadOnlySpan<byte> message)
    {
        if (!ClusterMessage.TryReadKind(message, out _) || !ClusterMessage.TryReadSeq(message, out _, out var rest) || !ClusterMessage.TryReadStateCount(ref rest, out var count))
            return false;
        for (var i = 0; i < count; i++)
        {
            if (!ClusterMessage.TryReadPeer(ref rest, out _))
                return false;
        }

        return rest.IsEmpty;
    }
}
