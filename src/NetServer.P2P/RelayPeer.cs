using System;

namespace NetServer.P2P;

/// <summary>A registered peer as the relay announces it: its id (bound by the relay to the peer's TLS connection) and the name it registered with.</summary>
public sealed class RelayPeer : IEquatable<RelayPeer>
{
    /// <summary>A peer with <paramref name="id"/> and <paramref name="name"/>.</summary>
    public RelayPeer(Guid id, string name)
    {
        Id = id;
        Name = name ?? string.Empty;
    }

    /// <summary>The peer's id: the <c>From</c> of everything it sends, the <c>To</c> of everything sent to it.</summary>
    public Guid Id { get; }

    /// <summary>The name the peer registered with (not unique, not checked: a label, not an identity).</summary>
    public string Name { get; }

    /// <inheritdoc/>
    public bool Equals(RelayPeer? other) => other is not null && other.Id == Id && other.Name == Name;

    /// <inheritdoc/>
    public override bool Equals(object? obj) => Equals(obj as RelayPeer);

    /// <inheritdoc/>
    public override int GetHashCode() => Id.GetHashCode();

    /// <inheritdoc/>
    public override string ToString() => Name.Length == 0 ? Id.ToString() : $"{Name} ({Id})";
}
