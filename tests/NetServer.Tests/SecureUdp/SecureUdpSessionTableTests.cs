using System;
using System.Buffers.Binary;
using System.Linq;
using Xunit;
using static NetServer.Tests.SecureUdp.SecureSessions;

namespace NetServer.Tests.SecureUdp;

/// <summary>
/// Several sessions on one socket: datagrams go to the session their receiver index names, what no
/// session can own is counted by the table before any cryptography, indexes are fresh, and the
/// relay's nesting works: a client seals [destination | inner peer datagram] to the relay, the relay
/// opens the outer layer and seals it again for the destination, and never holds the peer key.
/// </summary>
public class SecureUdpSessionTableTests
{
    [Fact]
    public void Datagrams_go_to_the_session_their_index_names()
    {
        var table = new SecureUdpSessionTable();
        var clients = Enumerable.Range(0, 3).Select(_ =>
        {
            var secret = SecureUdpSession.NewSecret();
            var serverIndex = table.NewIndex();
            var client = new SecureUdpSession(secret, Context, SecureUdpRole.Initiator, 100, serverIndex);
            Assert.True(table.TryAdd(new SecureUdpSession(secret, Context, SecureUdpRole.Responder, serverIndex, 100)));
            return client;
        }).ToArray();
        Assert.Equal(3, table.Count);

        for (var round = 0; round < 3; round++)
        {
            foreach (var (client, i) in clients.Select((c, i) => (c, i)))
            {
                var datagram = Seal(client, $"from client {i}");
                Assert.Equal(SecureDatagramStatus.Ok, table.Open(datagram, out var session, out var type, out var length));
                Assert.Equal(client.RemoteIndex, session!.LocalIndex);
                Assert.Equal(SecureDatagramType.Data, type);
                Assert.Equal($"from client {i}", System.Text.Encoding.UTF8.GetString(datagram, SecureUdpSession.HeaderLength, length));
            }
        }

        foreach (var client in clients)
        {
            Assert.True(table.TryGet(client.RemoteIndex, out var session));
            Assert.Equal(3, session.DatagramsOpened);
        }
    }

    [Fact]
    public void What_no_session_can_own_is_counted_by_the_table()
    {
        var table = new SecureUdpSessionTable();
        var (client, server) = Pair();
        Assert.True(table.TryAdd(server));
        var datagram = Seal(client, "hello");

        Assert.Equal(SecureDatagramStatus.Truncated, table.Open(datagram.AsSpan(0, 29), out var session, out _, out _));
        Assert.Null(session);
        var unknownType = (byte[])datagram.Clone();
        unknownType[0] = 0;
        Assert.Equal(SecureDatagramStatus.UnknownType, table.Open(unknownType, out _, out _, out _));
        var unknownIndex = (byte[])datagram.Clone();
        BinaryPrimitives.WriteUInt32BigEndian(unknownIndex.AsSpan(1), server.LocalIndex + 1);
        Assert.Equal(SecureDatagramStatus.UnknownIndex, table.Open(unknownIndex, out session, out _, out _));
        Assert.Null(session);

        Assert.Equal(1, table.DatagramsTruncated);
        Assert.Equal(1, table.DatagramsOfUnknownType);
        Assert.Equal(1, table.DatagramsForUnknownIndex);
        Assert.Equal(0, server.DatagramsDropped);

        // The session counts what reached it.
        var forged = (byte[])datagram.Clone();
        forged[^1] ^= 1;
        Assert.Equal(SecureDatagramStatus.AuthenticationFailed, table.Open(forged, out session, out _, out _));
        Assert.Same(server, session);
        Assert.Equal(1, server.AuthenticationFailures);
        Assert.Equal(SecureDatagramStatus.Ok, table.Open(datagram, out _, out _, out _));
    }

    [Fact]
    public void Indexes_are_fresh_and_a_removed_session_receives_nothing()
    {
        var table = new SecureUdpSessionTable();
        var (client, server) = Pair();
        Assert.True(table.TryAdd(server));
        Assert.False(table.TryAdd(new SecureUdpSession(SecureUdpSession.NewSecret(), default, SecureUdpRole.Responder, server.LocalIndex, 1)));
        var indexes = Enumerable.Range(0, 1000).Select(_ => table.NewIndex()).ToArray();
        Assert.DoesNotContain(server.LocalIndex, indexes);
        Assert.DoesNotContain(0u, indexes);
        Assert.True(indexes.Distinct().Count() > 990); // random 32-bit values

        Assert.True(table.Remove(server));
        Assert.False(table.Remove(server));
        Assert.Equal(SecureDatagramStatus.UnknownIndex, table.Open(Seal(client, "late"), out _, out _, out _));
    }

    [Fact]
    public void A_relay_reseals_the_outer_layer_and_never_sees_the_inner_plaintext()
    {
        // Keys: alice and bob each share a session with the relay, and one with each other (the relay
        // generated all three secrets, but the relay's table only holds its own sessions).
        var (aliceToRelay, relayFromAlice) = Pair(initiatorIndex: 0xA1, responderIndex: 0xA2);
        var (bobToRelay, relayFromBob) = Pair(initiatorIndex: 0xB1, responderIndex: 0xB2);
        var (alice, bob) = Pair(initiatorIndex: 0xC1, responderIndex: 0xC2);
        var relay = new SecureUdpSessionTable();
        relay.TryAdd(relayFromAlice);
        relay.TryAdd(relayFromBob);
        var bobSocket = new SecureUdpSessionTable();
        bobSocket.TryAdd(bobToRelay);
        bobSocket.TryAdd(bob);

        // Alice: the inner datagram for bob, then the outer one for the relay: [destination 'bob' | inner].
        var inner = Seal(alice, "secret for bob");
        var outerPayload = new byte[4 + inner.Length];
        BinaryPrimitives.WriteUInt32BigEndian(outerPayload, 0xB0B);
        inner.CopyTo(outerPayload, 4);
        var outer = Seal(aliceToRelay, outerPayload, SecureDatagramType.Relayed);

        // The relay: opens the outer layer, learns who sent it from the session, cannot open the inner one.
        Assert.Equal(SecureDatagramStatus.Ok, relay.Open(outer, out var from, out var type, out var length));
        Assert.Same(relayFromAlice, from);
        Assert.Equal(SecureDatagramType.Relayed, type);
        var opened = outer.AsSpan(SecureUdpSession.HeaderLength, length);
        Assert.Equal(0xB0Bu, BinaryPrimitives.ReadUInt32BigEndian(opened));
        var innerAtRelay = opened[4..].ToArray();
        Assert.Equal(SecureDatagramStatus.UnknownIndex, relay.Open(innerAtRelay.ToArray(), out _, out _, out _));
        Assert.True(innerAtRelay.AsSpan().IndexOf("secret for bob"u8) < 0);

        // ... and seals [source 'alice' | inner] for bob with bob's relay session.
        var forward = new byte[4 + innerAtRelay.Length];
        BinaryPrimitives.WriteUInt32BigEndian(forward, 0xA11CE);
        innerAtRelay.CopyTo(forward, 4);
        var toBob = Seal(relayFromBob, forward, SecureDatagramType.Relayed);

        // Bob: the outer layer with his relay session, then the inner datagram with alice's peer session.
        Assert.Equal(SecureDatagramStatus.Ok, bobSocket.Open(toBob, out from, out type, out length));
        Assert.Same(bobToRelay, from);
        Assert.Equal(SecureDatagramType.Relayed, type);
        var relayed = toBob.AsSpan(SecureUdpSession.HeaderLength, length);
        Assert.Equal(0xA11CEu, BinaryPrimitives.ReadUInt32BigEndian(relayed));
        var innerAtBob = relayed[4..];
        Assert.Equal(SecureDatagramStatus.Ok, bobSocket.Open(innerAtBob, out from, out type, out length));
        Assert.Same(bob, from);
        Assert.Equal("secret for bob", System.Text.Encoding.UTF8.GetString(innerAtBob.Slice(SecureUdpSession.HeaderLength, length)));

        // The same inner datagram replayed (directly, or relayed again) is refused by bob's peer session.
        Assert.Equal(SecureDatagramStatus.Replay, bobSocket.Open(inner, out _, out _, out _));
    }
}
