using System.Threading.Tasks;
using Xunit;

namespace NetServer.Tests.WebSockets;

/// <summary>Interop with python3-websockets (tests/python): its client against our WsServer/WssServer, our WsClient/WssClient against its server. The scenarios are in <see cref="WsInteropScenarios"/>.</summary>
public sealed class WsInteropPythonTests
{
    [PythonWebSocketsTheory]
    [MemberData(nameof(WsInteropScenarios.TransportsAndDeflate), MemberType = typeof(WsInteropScenarios))]
    public Task Python_websockets_client_talks_to_our_server(bool secure, WsDeflateMode deflate) =>
        WsInteropScenarios.TheirClientAgainstOurServerAsync(WsPeer.Python, secure, deflate);

    [PythonWebSocketsTheory]
    [MemberData(nameof(WsInteropScenarios.TransportsAndDeflate), MemberType = typeof(WsInteropScenarios))]
    public Task Our_client_talks_to_a_python_websockets_server(bool secure, WsDeflateMode deflate) =>
        WsInteropScenarios.OurClientAgainstTheirServerAsync(WsPeer.Python, secure, deflate);

    [PythonWebSocketsTheory]
    [InlineData(false)]
    [InlineData(true)]
    public Task Our_client_with_a_hand_written_upgrade_request_is_accepted_by_a_python_websockets_server(bool secure) =>
        WsInteropScenarios.HandWrittenRequestAgainstTheirServerAsync(WsPeer.Python, secure);
}
