using System;
using System.Net;
using Xunit;

namespace NetServer.Tests;

/// <summary>
/// The netstandard2.0 build has no AES-GCM, so it has no secure UDP: every way in refuses with a
/// <see cref="PlatformNotSupportedException"/> that says why and which build to use, before any
/// socket or key exists (the secure UDP tests of NetServer.Tests are not compiled here).
/// </summary>
public class SecureUdpRefusalTests
{
    [Fact]
    public void Every_secure_udp_entry_point_refuses_with_a_clear_message()
    {
        var entryPoints = new Func<object>[]
        {
            () => new SecureUdpSession(new byte[SecureUdpSession.SecretLength], default, SecureUdpRole.Initiator, 1, 2),
            () => new SecureUdpSession(new byte[SecureUdpSession.SecretLength], default, SecureUdpRole.Responder, 2, 1, SecureUdpAlgorithm.ChaCha20Poly1305),
            () => new SecureUdpSessionTable(),
            () => new SecureUdpServer(IPAddress.Loopback, 0),
            () => new SecureUdpClient(IPAddress.Loopback, 1, null!),
        };
        foreach (var entryPoint in entryPoints)
        {
            var e = Assert.Throws<PlatformNotSupportedException>(entryPoint);
            Assert.Contains("AES-GCM", e.Message, StringComparison.Ordinal);
            Assert.Contains("netstandard2.0", e.Message, StringComparison.Ordinal);
            Assert.Contains("net10.0 or netstandard2.1", e.Message, StringComparison.Ordinal);
        }

        Assert.False(SecureUdpSession.IsSupported(SecureUdpAlgorithm.AesGcm));
        Assert.False(SecureUdpSession.IsSupported(SecureUdpAlgorithm.ChaCha20Poly1305));
    }
}
