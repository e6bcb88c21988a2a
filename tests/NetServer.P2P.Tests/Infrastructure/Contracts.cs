using ProtoBuf;

namespace NetServer.P2P.Tests.Infrastructure;

/// <summary>message Sample { int32 a = 1; string text = 2; }</summary>
[ProtoContract]
public sealed class Sample
{
    [ProtoMember(1)]
    public int A { get; set; }

    [ProtoMember(2)]
    public string? Text { get; set; }
}
