namespace NetServer;

/// <summary>One type-length-value field from a PROXY protocol v2 header.</summary>
internal readonly struct ProxyTlv
{
    /// <summary>Creates a TLV.</summary>
    public ProxyTlv(byte type, byte[] value)
    {
        Type = type;
        Value = value;
    }

    /// <summary>The type byte (0x01 ALPN, 0x02 AUTHORITY, 0x05 UNIQUE_ID, 0x20 SSL, ...).</summary>
    public byte Type { get; }

    /// <summary>The raw value bytes.</summary>
    public byte[] Value { get; }
}
