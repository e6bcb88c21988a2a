using Xunit;

namespace NetServer.Tests.Infrastructure;

/// <summary>
/// Tests that close a socket and at once bind its port again run alone, after the parallel
/// collections. A child process that another test starts holds a copy of every descriptor of this
/// process from its fork until its exec, so for that moment the closed socket lives on and keeps
/// its port: the second bind fails with AddressAlreadyInUse although the product closed the socket
/// before it said so (seen in CI while a test started the benchmark CLI; reproduced by restarting a
/// UdpServer 3,000 times with /bin/true started in a loop meanwhile: 5 failures, each with the port
/// held by the old socket's own inode and no descriptor of it left in this process; none without the
/// child processes). Alone, a failure to bind again is the product's.
/// </summary>
[CollectionDefinition(nameof(PortRebindCollection), DisableParallelization = true)]
public sealed class PortRebindCollection;
