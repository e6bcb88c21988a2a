using System;

namespace NetServer.P2P;

/// <summary>The relay refused a request or a registration, or the addressee of a request left: <see cref="Status"/> says which.</summary>
public sealed class RelayException : Exception
{
    /// <summary>An exception for <paramref name="status"/> with <paramref name="message"/>.</summary>
    public RelayException(RelayStatus status, string message)
        : base(message) => Status = status;

    /// <summary>An exception for <see cref="RelayStatus.Forbidden"/> (the parameterless form the design rules ask for).</summary>
    public RelayException()
        : this(RelayStatus.Forbidden, "The relay refused the operation.")
    {
    }

    /// <summary>An exception for <see cref="RelayStatus.Forbidden"/> with <paramref name="message"/>.</summary>
    public RelayException(string message)
        : this(RelayStatus.Forbidden, message)
    {
    }

    /// <summary>An exception for <see cref="RelayStatus.Forbidden"/> with <paramref name="message"/> and its cause.</summary>
    public RelayException(string message, Exception innerException)
        : base(message, innerException) => Status = RelayStatus.Forbidden;

    /// <summary>Why.</summary>
    public RelayStatus Status { get; }
}
