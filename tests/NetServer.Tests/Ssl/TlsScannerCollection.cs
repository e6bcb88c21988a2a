using Xunit;

namespace NetServer.Tests.Ssl;

/// <summary>The TLS scans run alone, after the parallel collections: each is hundreds of handshakes and openssl processes (about 30 s on an idle 2-core machine).</summary>
[CollectionDefinition(nameof(TlsScannerCollection), DisableParallelization = true)]
public sealed class TlsScannerCollection;
