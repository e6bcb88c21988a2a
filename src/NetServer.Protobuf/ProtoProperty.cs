using System;
using NetServer.Protobuf.Internal;
using NetServer.Protobuf.Wire;

namespace NetServer.Protobuf;

/// <summary>One key-value property of a received envelope (<see cref="ProtoMessage.Properties"/>), read in place.</summary>
public readonly ref struct ProtoProperty
{
    private ProtoProperty(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value)
    {
        KeyUtf8 = key;
        ValueUtf8 = value;
    }

    /// <summary>The key's UTF-8 bytes.</summary>
    public ReadOnlySpan<byte> KeyUtf8 { get; }

    /// <summary>The value's UTF-8 bytes.</summary>
    public ReadOnlySpan<byte> ValueUtf8 { get; }

    /// <summary>The key as a new string.</summary>
    public string Key => KeyUtf8.IsEmpty ? string.Empty : WireFormat.Utf8.GetString(KeyUtf8);

    /// <summary>The value as a new string.</summary>
    public string Value => ValueUtf8.IsEmpty ? string.Empty : WireFormat.Utf8.GetString(ValueUtf8);

    /// <summary>True when the key equals <paramref name="key"/> (compared as UTF-8).</summary>
    public bool KeyEquals(string key)
    {
        Guard.NotNull(key, nameof(key));
        if (WireFormat.Utf8.GetByteCount(key) != KeyUtf8.Length)
            return false;
        Span<byte> utf8 = KeyUtf8.Length <= 256 ? stackalloc byte[KeyUtf8.Length] : new byte[KeyUtf8.Length];
        WireFormat.Utf8.GetBytes(key.AsSpan(), utf8);
        return utf8.SequenceEqual(KeyUtf8);
    }

    /// <summary>Reads a Property message (string key = 1, string value = 2; unknown fields skipped).</summary>
    internal static bool TryRead(ReadOnlySpan<byte> source, out ProtoProperty property, out string? error)
    {
        property = default;
        ReadOnlySpan<byte> key = default, value = default;
        var position = 0;
        while (position < source.Length)
        {
            if (!WireFormat.TryReadVarint(source, ref position, out var tag) || tag > uint.MaxValue || tag >> 3 == 0)
                return ProtoMessage.Fail(out error, "a property (field 6) has a malformed tag");
            var field = (int)(tag >> 3);
            var wireType = (int)(tag & 7);
            if (field is EnvelopeFields.PropertyKey or EnvelopeFields.PropertyValue)
            {
                if (wireType != WireFormat.LengthDelimited || !WireFormat.TryReadLengthDelimited(source, ref position, out var text))
                    return ProtoMessage.Fail(out error, $"a property's {(field == 1 ? "key" : "value")} is not a well-formed string");
                if (!WireFormat.IsValidUtf8(text))
                    return ProtoMessage.Fail(out error, $"a property's {(field == 1 ? "key" : "value")} is not valid UTF-8");
                if (field == EnvelopeFields.PropertyKey)
                    key = text;
                else
                    value = text;
            }
            else if (!WireFormat.TrySkip(source, ref position, wireType))
            {
                return ProtoMessage.Fail(out error, $"a property (field 6) has a malformed field {field}");
            }
        }

        property = new ProtoProperty(key, value);
        error = null;
        return true;
    }
}
