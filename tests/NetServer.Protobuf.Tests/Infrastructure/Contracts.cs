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

/// <summary>message Ping { int64 sequence = 1; bytes data = 2; }: 32 bytes serialized with a 26-byte data field and a 3-byte sequence.</summary>
[ProtoContract]
public sealed class Ping
{
    [ProtoMember(1)]
    public long Sequence { get; set; }

    [ProtoMember(2)]
    public byte[]? Data { get; set; }
}
