namespace NetServer.Protobuf;

/// <summary>The field numbers of the envelope on the wire (see docs/protobuf.md for the .proto).</summary>
public static class EnvelopeFields
{
    /// <summary>bytes id = 1: the message's GUID, 16 bytes in RFC 9562 (text) order.</summary>
    public const int Id = 1;

    /// <summary>bytes from = 2: the sender's GUID.</summary>
    public const int From = 2;

    /// <summary>bytes to = 3: the addressee's GUID.</summary>
    public const int To = 3;

    /// <summary>string header = 4: the message type or route.</summary>
    public const int Header = 4;

    /// <summary>int64 timestamp = 5: Unix time in milliseconds (UTC).</summary>
    public const int Timestamp = 5;

    /// <summary>repeated Property properties = 6: key-value pairs (Property: string key = 1, string value = 2).</summary>
    public const int Properties = 6;

    /// <summary>uint64 request_id = 8: the correlation id of a request and of its reply.</summary>
    public const int RequestId = 8;

    /// <summary>uint32 flags = 9: <see cref="ProtoFlags"/>.</summary>
    public const int Flags = 9;

    /// <summary>bytes payload = 15: the payload, a protobuf message of the application, last.</summary>
    public const int Payload = 15;

    /// <summary>string key = 1 inside a Property.</summary>
    public const int PropertyKey = 1;

    /// <summary>string value = 2 inside a Property.</summary>
    public const int PropertyValue = 2;
}
