using System;

namespace NetServer.Protobuf;

/// <summary>What an envelope is in a request/response exchange (envelope field 9, a bit set).</summary>
[Flags]
public enum ProtoFlags : uint
{
    /// <summary>A plain message: nobody waits for an answer.</summary>
    None = 0,

    /// <summary>A request: the sender awaits a reply carrying the same <see cref="MessageEnvelope.RequestId"/>.</summary>
    Request = 1,

    /// <summary>A reply to the request whose <see cref="MessageEnvelope.RequestId"/> it carries.</summary>
    Response = 2,
}
