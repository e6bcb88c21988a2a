namespace NetServer;

/// <summary>One type-length-value field from a PROXY protocol v2 header (see <see cref="ProxyInfo.Tlvs"/>).</summary>
public readonly struct ProxyTlv : IEquatable<ProxyTlv>
{
    internal ProxyTlv(byte type, byte[] value)
    {
        Type = type;
        Value = value;
    }

    /// <summary>The type byte (0x01 ALPN, 0x02 AUTHORITY, 0x05 UNIQUE_ID, 0x20 SSL, 0xE0-0xEF custom, ...).</summary>
    public byte Type { get; }

    /// <summary>The raw value bytes.</summary>
    public ReadOnlyMemory<byte> Value { get; }

    /// <inheritdoc/>
    public bool Equals(ProxyTlv other) => Type == other.Type && Value.Span.SequenceEqual(other.Value.Span);

    /// <inheritdoc/>
    public override bool Equals(object? obj) => obj is ProxyTlv other && Equals(other);

    /// <inheritdoc/>
    public override int GetHashCode() => (Type << 16) ^ Value.Length;

    /// <summary>True when both have the same type and the same value bytes.</summary>
    public static bool operator ==(ProxyTlv left, ProxyTlv right) => left.Equals(right);

    /// <summary>True when they differ in type or value.</summary>
    public static bool operator !=(ProxyTlv left, ProxyTlv right) => !left.Equals(right);
}
