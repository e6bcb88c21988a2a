using System;
using NetServer.Protobuf.Wire;

namespace NetServer.Protobuf;

/// <summary>Enumerates the properties of a received envelope in wire order (a <c>foreach</c> over <see cref="ProtoMessage.Properties"/>).</summary>
public ref struct ProtoPropertyEnumerator
{
    private readonly ReadOnlySpan<byte> _envelope;
    private int _position;

    internal ProtoPropertyEnumerator(ReadOnlySpan<byte> envelope)
    {
        _envelope = envelope;
        _position = 0;
        Current = default;
    }

    /// <summary>The current property.</summary>
    public ProtoProperty Current { get; private set; }

    /// <summary>Returns this enumerator (so <c>foreach</c> works on <see cref="ProtoMessage.Properties"/>).</summary>
    public readonly ProtoPropertyEnumerator GetEnumerator() => this;

    /// <summary>Moves to the next property; the envelope was validated when parsed, so this only walks it.</summary>
    public bool MoveNext()
    {
        while (_position < _envelope.Length)
        {
            WireFormat.TryReadVarint(_envelope, ref _position, out var tag);
            var wireType = (int)(tag & 7);
            if ((int)(tag >> 3) == EnvelopeFields.Properties && wireType == WireFormat.LengthDelimited)
            {
                WireFormat.TryReadLengthDelimited(_envelope, ref _position, out var bytes);
                ProtoProperty.TryRead(bytes, out var property, out _);
                Current = property;
                return true;
            }

            WireFormat.TrySkip(_envelope, ref _position, wireType);
        }

        return false;
    }
}
