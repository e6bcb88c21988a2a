using Xunit;

namespace NetServer.Tests.Infrastructure;

/// <summary>
/// Tests that add network interfaces to the machine (the slow link's veth pair) and tests that
/// drive Chromium do not run at the same time: Chromium watches the machine's interfaces, and a
/// page load under way when one appears or goes fails with net::ERR_NETWORK_CHANGED (seen in a
/// full run: the wss chat page could not load while UdpSlowLinkTests built its link). The other
/// collections still run alongside.
/// </summary>
[CollectionDefinition(nameof(HostNetworkCollection))]
public sealed class HostNetworkCollection;
