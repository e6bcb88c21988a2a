using System.Linq;
using System.Reflection;
using Xunit;

namespace NetServer.Tests.WebSockets;

/// <summary>The close status codes and which of them a Close frame may carry (RFC 6455 7.4, the IANA registry).</summary>
public sealed class WsCloseStatusTests
{
    [Theory]
    [InlineData(1000)]
    [InlineData(1001)]
    [InlineData(1002)]
    [InlineData(1003)]
    [InlineData(1007)]
    [InlineData(1008)]
    [InlineData(1009)]
    [InlineData(1010)]
    [InlineData(1011)]
    [InlineData(1012)]
    [InlineData(1013)]
    [InlineData(1014)]
    [InlineData(3000)]
    [InlineData(3999)]
    [InlineData(4000)]
    [InlineData(4999)]
    public void Codes_a_peer_may_send_are_valid_on_the_wire(int status) =>
        Assert.True(WsCloseStatus.IsValidOnWire(status));

    [Theory]
    [InlineData(int.MinValue)]
    [InlineData(-1)]
    [InlineData(0)]
    [InlineData(999)]
    [InlineData(1004)]
    [InlineData(1005)]
    [InlineData(1006)]
    [InlineData(1015)]
    [InlineData(1016)]
    [InlineData(1100)]
    [InlineData(2000)]
    [InlineData(2999)]
    [InlineData(5000)]
    [InlineData(65535)]
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
