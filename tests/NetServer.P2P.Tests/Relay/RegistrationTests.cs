using System;
using System.Linq;
using System.Net;
using System.Threading.Tasks;
using NetServer.P2P.Tests.Infrastructure;
using NetServer.P2P.Wire;
using NetServer.P2P.Wire.Contracts;
using NetServer.Protobuf;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.P2P.Tests.Relay;

/// <summary>Registration: an id bound to the connection, the welcome, and the rules and limits before and around it.</summary>
public sealed class RegistrationTests
{
    [Fact]
    public async Task A_peer_gets_an_id_and_a_session_id_bound_to_its_connection_and_the_relays_limits()
    {
        var options = new RelayServerOptions { MaxMessageSize = 100_000, PeerMessageRate = 1234, MaxRoomsPerPeer = 3 };
        await using var harness = new RelayHarness(options);
        var a = await harness.ConnectAsync("alice");
        var b = await harness.ConnectAsync("bob");

        Assert.True(a.IsRegistered);
        Assert.NotEqual(Guid.Empty, a.PeerId);
        Assert.NotEqual(Guid.Empty, a.SessionId);
        Assert.NotEqual(a.PeerId, a.SessionId);
        Assert.NotEqual(a.PeerId, b.PeerId);
        Assert.Equal(100_000, a.Limits!.MaxMessageSize);
        Assert.Equal(1234, a.Limits.MessageRate);
        Assert.Equal(3, a.Limits.MaxRooms);

        Assert.True(harness.Relay.TryGetPeer(a.PeerId, out var seen));
        Assert.Equal("alice", seen!.Name);
        var local = (IPEndPoint)a.Transport.Socket!.LocalEndPoint!;
        Assert.True(harness.Relay.TryGetPeerId(local, out var byEndpoint));
        Assert.Equal(a.PeerId, byEndpoint);
        Assert.True(harness.Relay.TryGetPeerStatistics(a.PeerId, out var statistics));
        Assert.Equal(a.PeerId, statistics!.Peer.Id);
    }

    [Fact]
    public async Task A_connection_that_does_not_register_in_time_is_closed()
    {
        await using var harness = new RelayHarness(new RelayServerOptions { RegistrationTimeout = TimeSpan.FromMilliseconds(300) });
        using var raw = new ProtoClient(TestCertificates.ClientContext(), harness.Endpoint);
        Assert.True(await raw.ConnectAsync().WaitAsync(Wait.Default));
        await Wait.UntilAsync(() => !raw.IsConnected, () => "the relay to close an unregistered connection");
        await Wait.UntilAsync(() => harness.Relay.ConnectedSessions == 0, () => "the session to end");
        Assert.Equal(0, harness.Relay.PeerCount);
    }

    [Fact]
    public async Task Anything_but_a_registration_first_is_refused_and_the_connection_closed()
    {
        await using var harness = new RelayHarness();
        var peer = await harness.ConnectAsync("target");
        using var raw = new ProtoClient(TestCertificates.ClientContext(), harness.Endpoint);
        Assert.True(await raw.ConnectAsync().WaitAsync(Wait.Default));
        Assert.True(raw.SendAsync(new MessageEnvelope("hello") { To = peer.PeerId }));

        var refusal = await raw.ReceiveEnvelopeAsync().AsTask().WaitAsync(Wait.Default);
        Assert.Equal(RelayKinds.Status, refusal.Header);
        Assert.Equal(Guid.Empty, refusal.From);
        Assert.Equal((uint)RelayStatus.NotRegistered, refusal.Unpack<StatusMessage>().Status);
        await Wait.UntilAsync(() => !raw.IsConnected, () => "the relay to close the connection");
        Assert.Equal(0, peer.Received);
    }

    [Fact]
    public Task Registrations_per_source_address_are_limited() => AssertRegistrationsLimitedAsync(IPAddress.Loopback, new RelayServerOptions { MaxPeersPerAddress = 2 });

    /// <summary>The limit on IPv6, counted by the /64 (IpAddressesTests): the place a departure frees is the one its registration took.</summary>
    [Ipv6LoopbackFact]
    public Task Registrations_per_source_address_are_limited_on_IPv6() => AssertRegistrationsLimitedAsync(IPAddress.IPv6Loopback, new RelayServerOptions { MaxPeersPerAddress = 2 });

    /// <summary>
    /// The per-/48 limit, the per-address one off: ::1's /48 is ::/48, so only the site count can
    /// refuse the third (one /48 of many /64s: RegistrationLimitReviewTests).
    /// </summary>
    [Ipv6LoopbackFact]
    public Task Registrations_per_IPv6_site_are_limited() =>
        AssertRegistrationsLimitedAsync(IPAddress.IPv6Loopback, new RelayServerOptions { MaxPeersPerAddress = 0, MaxPeersPerIPv6Site = 2 });

    [Fact]
    public async Task The_IPv6_site_limit_does_not_count_IPv4_peers()
    {
        await using var harness = new RelayHarness(new RelayServerOptions { MaxPeersPerAddress = 3, MaxPeersPerIPv6Site = 1 });
        foreach (var name in new[] { "1", "2", "3" })
            Assert.True((await harness.ConnectAsync(name)).IsRegistered);
        Assert.Equal(3, harness.Relay.PeerCount);
    }

    private static async Task AssertRegistrationsLimitedAsync(IPAddress address, RelayServerOptions options)
    {
        await using var harness = new RelayHarness(options, address: address);
        var first = await harness.ConnectAsync("1");
        await harness.ConnectAsync("2");

        var third = new TestPeer(harness.Endpoint) { Name = "3" };
        var refused = await Assert.ThrowsAsync<RelayException>(() => harness.ConnectAsync(third));
        Assert.Equal(RelayStatus.TooManyRegistrations, refused.Status);
        Assert.False(third.IsConnected);
        Assert.Equal(2, harness.Relay.PeerCount);

        // A departure frees its place.
        await first.DisconnectAsync();
        await Wait.UntilAsync(() => harness.Relay.PeerCount == 1, () => "the first peer to leave");
        var fourth = await harness.ConnectAsync("4");
        Assert.True(fourth.IsRegistered);
    }

    [Fact]
    public async Task A_second_registration_on_a_connection_is_refused_and_its_id_stays()
    {
        await using var harness = new RelayHarness();
        var peer = await harness.ConnectAsync("once");
        var id = peer.PeerId;
        var register = new MessageEnvelope(RelayKinds.Register) { To = RelayAddresses.Relay }.Pack(new RegisterMessage { Name = "twice", Protocol = RelayProtocol.Version });
        Assert.True(peer.SendEncoded(register.ToArray()));

        await Wait.UntilAsync(() => !peer.Failures.IsEmpty, () => "the refusal");
        Assert.Equal(RelayStatus.AlreadyRegistered, peer.Failures.Single().Status);
        Assert.Equal(id, peer.PeerId);
        Assert.True(harness.Relay.TryGetPeer(id, out var seen));
        Assert.Equal("once", seen!.Name);
        Assert.Equal(1, harness.Relay.PeerCount);
    }

    [Theory]
    [InlineData("a-name-that-is-longer-than-the-sixteen-bytes-allowed")]
    [InlineData("bell\u0007")]
    public async Task A_bad_name_is_refused(string name)
    {
        await using var harness = new RelayHarness(new RelayServerOptions { MaxNameLength = 16 });
        var refused = await Assert.ThrowsAsync<RelayException>(() => harness.ConnectAsync(new TestPeer(harness.Endpoint) { Name = name }));
        Assert.Equal(RelayStatus.InvalidRequest, refused.Status);
        Assert.Equal(0, harness.Relay.PeerCount);
    }

    [Fact]
    public async Task The_servers_hook_can_refuse_a_registration()
    {
        await using var harness = new RelayHarness(create: options => new PickyRelay(options!));
        var admitted = await harness.ConnectAsync("friend");
        var refused = await Assert.ThrowsAsync<RelayException>(() => harness.ConnectAsync(new TestPeer(harness.Endpoint) { Name = "stranger" }));
        Assert.Equal(RelayStatus.RegistrationRefused, refused.Status);
        Assert.Equal([admitted.PeerId], harness.Relay.GetPeers().Select(p => p.Id));
    }

    [Fact]
    public async Task A_relay_that_is_not_listening_fails_the_connect()
    {
        await using var harness = new RelayHarness();
        var endpoint = harness.Endpoint;
        harness.Relay.Stop();
        using var peer = new TestPeer(endpoint);
        await Assert.ThrowsAnyAsync<Exception>(() => peer.ConnectAsync().WaitAsync(Wait.Default));
        Assert.False(peer.IsRegistered);
    }

    [Fact]
    public async Task The_registration_times_out_when_the_relay_never_answers()
    {
        // A TLS server that takes the registration and says nothing.
        using var silent = new ProtoServer(TestCertificates.ServerContext(), new IPEndPoint(IPAddress.Loopback, 0));
        Assert.True(silent.Start());
        using var peer = new TestPeer(silent.Endpoint) { RegistrationTimeout = TimeSpan.FromMilliseconds(300) };
        await Assert.ThrowsAsync<TimeoutException>(() => peer.ConnectAsync().WaitAsync(Wait.Default));
        await Wait.UntilAsync(() => !peer.IsConnected, () => "the client to close");
    }

    private sealed class PickyRelay(RelayServerOptions options) : RelayServer(TestCertificates.ServerContext(), IPAddress.Loopback, 0, options)
    {
        protected override RelayStatus OnRegistering(RelayRegistration registration) =>
            registration.Name == "friend" ? RelayStatus.Ok : RelayStatus.RegistrationRefused;
    }
}
