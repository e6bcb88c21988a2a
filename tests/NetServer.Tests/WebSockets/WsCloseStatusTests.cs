using System.Linq;
using System.Reflection;
using Xunit;

namespace NetServer.Tests.WebSockets;

/// <summary>The close status codes and which of them a Close frame may carry (RFC 6455 7.4, the IANA registry).</summary>
public sealed class WsCloseStatusTests
{
    /// <summary>Codes a Close frame may carry (also the WebSocket conformance tests' cases).</summary>
    public static TheoryData<int> SendableCodes => new() { 1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 3000, 3999, 4000, 4999 };

    /// <summary>Codes of the 16-bit field a Close frame may not carry (also the conformance tests' cases).</summary>
    public static TheoryData<int> UnsendableCodes => new() { 0, 999, 1004, 1005, 1006, 1015, 1016, 1100, 2000, 2999, 5000, 65535 };

    [Theory]
    [MemberData(nameof(SendableCodes))]
    public void Codes_a_peer_may_send_are_valid_on_the_wire(int status) =>
        Assert.True(WsCloseStatus.IsValidOnWire(status));

    [Theory]
    [MemberData(nameof(UnsendableCodes))]
    [InlineData(int.MinValue)]
    [InlineData(-1)]
    [InlineData(65536)]
    [InlineData(int.MaxValue)]
    public void Reserved_local_only_and_unassigned_codes_are_not(int status) =>
        Assert.False(WsCloseStatus.IsValidOnWire(status));

    [Fact]
    public void The_constants_have_their_registered_values_and_only_the_local_ones_are_invalid_on_the_wire()
    {
        Assert.Equal(
            [1000, 1001, 1002, 1003, 1005, 1006, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 1015],
            new[]
            {
                WsCloseStatus.Normal, WsCloseStatus.GoingAway, WsCloseStatus.ProtocolError, WsCloseStatus.UnsupportedData,
                WsCloseStatus.NoStatus, WsCloseStatus.Abnormal, WsCloseStatus.InvalidPayload, WsCloseStatus.PolicyViolation,
                WsCloseStatus.MessageTooBig, WsCloseStatus.MandatoryExtension, WsCloseStatus.InternalError,
                WsCloseStatus.ServiceRestart, WsCloseStatus.TryAgainLater, WsCloseStatus.BadGateway, WsCloseStatus.TlsHandshake,
            });

        var localOnly = typeof(WsCloseStatus).GetFields(BindingFlags.Public | BindingFlags.Static)
            .Where(f => f.IsLiteral && !WsCloseStatus.IsValidOnWire((int)f.GetRawConstantValue()!))
            .Select(f => f.Name)
            .OrderBy(n => n, System.StringComparer.Ordinal);
        Assert.Equal(["Abnormal", "NoStatus", "TlsHandshake"], localOnly);
    }
}
