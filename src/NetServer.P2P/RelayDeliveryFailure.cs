using System;

namespace NetServer.P2P;

/// <summary>A plain message the relay did not deliver (<see cref="RelayClient.OnDeliveryFailed"/>): which one, to whom, and why.</summary>
public sealed class RelayDeliveryFailure
{
    internal RelayDeliveryFailure(RelayStatus status, Guid messageId, Guid to, string detail)
    {
        Status = status;
        MessageId = messageId;
        To = to;
        Detail = detail;
    }

    /// <summary>Why.</summary>
    public RelayStatus Status { get; }

    /// <summary>The refused envelope's <c>Id</c> (empty if it had none).</summary>
    public Guid MessageId { get; }

    /// <summary>Its addressee.</summary>
    public Guid To { get; }

    /// <summary>The relay's words.</summary>
    public string Detail { get; }

    /// <inheritdoc/>
    public override string ToString() => $"{Status}: {Detail}";
}
