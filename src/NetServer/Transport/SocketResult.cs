
namespace NetServer.Transport;

/// <summary>The outcome of one socket operation: bytes moved, or the error that stopped it.</summary>
internal readonly struct SocketResult(int bytesTransferred, SocketError error)
{
    public int BytesTransferred { get; } = bytesTransferred;

    public SocketError Error { get; } = error;

    public bool IsSuccess => Error == SocketError.Success;
}
