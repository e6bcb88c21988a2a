using System.Collections.Generic;
using ProtoBuf;

namespace NetServer.Protobuf.Tests.Infrastructure;

/// <summary>message Sample { int32 a = 1; string text = 2; }</summary>
[ProtoContract]
public sealed class Sample
{
    [ProtoMember(1)]
    public int A { get; set; }

    [ProtoMember(2)]
    public string? Text { get; set; }
}

/// <summary>message Numbers { repeated int32 values = 1; }</summary>
[ProtoContract]
public sealed class Numbers
{
    [ProtoMember(1, IsPacked = true)]
    public List<int> Values { get; set; } = [];
}
