using System;
namespace NetServer.Redis;

/// <summary>Sends bytes to one local session.</summary>
public delegate bool SessionSender(Guid sessionId, ReadOnlySpan<byte> message);

/// <summary>Sends bytes to every local session.</summary>
public delegate bool BroadcastSender(ReadOnlySpan<byte> message);

/// <summary>
/// An <see cref="ILocalDelivery"/> from two delegates, so any server plugs in with two lambdas, e.g.
/// <c>new LocalDelivery((id, m) =&gt; server.FindSession(id)?.SendMessage(m) ?? false, m =&gt; server.Multicast(m))</c>.
/// </summary>
public sealed class LocalDelivery : ILocalDelivery
{
    private readonly SessionSender _toSession;
    private readonly BroadcastSender _toAll;

    /// <summary>Creates the adapter from the two sends.</summary>
    public LocalDelivery(SessionSender toSession, BroadcastSender toAll)
    {
        _toSession = toSession ?? throw new ArgumentNullException(nameof(toSession));
        _toAll = toAll ?? throw new ArgumentNullException(nameof(toAll));
    }

    /// <inheritdoc />
    public bool SendToSession(Guid sessionId, ReadOnlySpan<byte> message) => _toSession(sessionId, message);

    /// <inheritdoc />
    public bool SendToAll(ReadOnlySpan<byte> message) => _toAll(message);
}
