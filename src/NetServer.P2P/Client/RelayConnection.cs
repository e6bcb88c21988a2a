using System.Net;
using NetServer.Protobuf;

namespace NetServer.P2P.Client;

/// <summary>The TLS envelope client under a <see cref="RelayClient"/>: its hooks go to the relay client.</summary>
internal sealed class RelayConnection(RelayClient owner, SslContext context, EndPoint endpoint) : ProtoClient(context, endpoint)
{
    protected override void OnMessage(in ProtoMessage message) => owner.Receive(in message);

    protected override void OnDisconnected(DisconnectReason reason)
    {
        base.OnDisconnected(reason);
        owner.Disconnected(reason);
    }
}
