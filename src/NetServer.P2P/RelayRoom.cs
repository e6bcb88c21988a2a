using System;

namespace NetServer.P2P;

/// <summary>A room the client joined: its name and the id the relay gave it (send to the room by addressing that id).</summary>
public sealed class RelayRoom
{
    /// <summary>A room named <paramref name="name"/> with <paramref name="id"/>.</summary>
    public RelayRoom(Guid id, string name)
    {
        Id = id;
        Name = name ?? throw new ArgumentNullException(nameof(name));
    }

    /// <summary>The room's id while it exists (a room ends when its last member leaves; joined again, it gets a new id).</summary>
    public Guid Id { get; }

    /// <summary>The room's name.</summary>
    public string Name { get; }

    /// <summary>Members when the relay answered the join (this client included).</summary>
    public int MembersAtJoin { get; internal set; }

    /// <inheritdoc/>
    public override string ToString() => $"{Name} ({Id})";
}
