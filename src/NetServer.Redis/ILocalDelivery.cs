using System;
namespace NetServer.Redis;

/// <summary>
/// The one seam between the backplane and a server of any kind (byte messages, WebSocket, raw streams):
/// it hands bytes to a session of this process, or to every session of this process.
/// </summary>
public interface ILocalDelivery
{
    /// <summary>Sends <paramref name="message"/> to the local session <paramref name="sessionId"/>; false when it is not here or refused it.</summary>
    bool SendToSession(Guid sessionId, ReadOnlySpan<byte> message);

    /// <summary>Sends <paramref name="message"/> to every local session; false when the server refused it.</summary>
    bool SendToAll(ReadOnlySpan<byte> message);
}
