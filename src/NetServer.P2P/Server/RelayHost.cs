using System.Net;
using NetServer.Protobuf;

namespace NetServer.P2P.Server;

/// <summary>The envelope server under a <see cref="RelayServer"/>: TLS, one <see cref="RelaySession"/> per connection.</summary>
internal sealed class RelayHost(RelayServer relay, SslContext context, EndPoint endpoint) : ProtoServer(context, endpoint)
{
    protected override ProtoSession CreateProtoSession() => new RelaySession(this, relay);
}
