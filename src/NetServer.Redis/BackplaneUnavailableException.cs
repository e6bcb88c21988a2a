using System;
namespace NetServer.Redis;

/// <summary>A remote send or update that Redis did not take; local delivery is unaffected.</summary>
public sealed class BackplaneUnavailableException : Exception
{
    /// <summary>Creates the exception.</summary>
    public BackplaneUnavailableException(string message, Exception? inner = null) : base(message, inner) { }
}
