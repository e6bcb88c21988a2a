using Xunit;

namespace NetServer.Tests.Infrastructure;

/// <summary>The stream transports every engine guarantee is checked on.</summary>
public enum TransportKind
{
    Tcp,
    Uds,
    Ssl,
}

/// <summary>Theory data: every stream transport.</summary>
public static class Transports
{
    /// <summary>TCP, Unix sockets and (where the build has it) TLS.</summary>
    public static TheoryData<TransportKind> All => SecureTransport.Enabled
        ? new() { TransportKind.Tcp, TransportKind.Uds, TransportKind.Ssl }
        : new() { TransportKind.Tcp, TransportKind.Uds };

    /// <summary>The plain socket transports, for tests that drive the server with raw socket bytes.</summary>
    public static TheoryData<TransportKind> Plain => new() { TransportKind.Tcp, TransportKind.Uds };
}
