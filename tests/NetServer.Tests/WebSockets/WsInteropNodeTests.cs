using System.Threading.Tasks;
using Xunit;

namespace NetServer.Tests.WebSockets;

/// <summary>Interop with Node's <c>ws</c> (tests/node): its client against our WsServer/WssServer, our WsClient/WssClient against its server. The scenarios are in <see cref="WsInteropScenarios"/>.</summary>
public sealed class WsInteropNodeTests
{
    [NodeWsTheory]
    [MemberData(nameof(WsInteropScenarios.TransportsAndDeflate), MemberType = typeof(WsInteropScenarios))]
    public Task Node_ws_client_talks_to_our_server(bool secure, WsDeflateMode deflate) =>
        WsInteropScenarios.TheirClientAgainstOurServerAsync(WsPeer.Node, secure, deflate);

    [NodeWsTheory]
    [MemberData(nameof(WsInteropScenarios.TransportsAndDeflate), MemberType = typeof(WsInteropScenarios))]
    public Task Our_client_talks_to_a_node_ws_server(bool secure, WsDeflateMode deflate) =>
        WsInteropScenarios.OurClientAgainstTheirServerAsync(WsPeer.Node, secure, deflate);

    [NodeWsTheory]
    [InlineData(false)]
    [InlineData(true)]
    public Task Our_client_with_a_hand_written_upgrade_request_is_accepted_by_a_node_ws_server(bool secure) =>
        WsInteropScenarios.HandWrittenRequestAgainstTheirServerAsync(WsPeer.Node, secure);
}
