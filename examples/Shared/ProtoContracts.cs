using System.Collections.Generic;
using ProtoBuf;

namespace NetServer.Examples.Proto;

/// <summary>The routes the example server answers (the envelope's header).</summary>
internal static class Routes
{
    public const string Sum = "math/sum";
    public const string Slow = "math/slow";
    public const int DefaultPort = 3333;
}

/// <summary>message SumRequest { repeated int32 values = 1; }</summary>
[ProtoContract]
internal sealed class SumRequest
{
    [ProtoMember(1, IsPacked = true)]
    public List<int> Values { get; set; } = [];
}

/// <summary>message SumReply { int64 sum = 1; int32 count = 2; }</summary>
[ProtoContract]
internal sealed class SumReply
{
    [ProtoMember(1)]
    public long Sum { get; set; }

    [ProtoMember(2)]
    public int Count { get; set; }
}
