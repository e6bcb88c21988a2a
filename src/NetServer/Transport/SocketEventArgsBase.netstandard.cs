
namespace NetServer.Transport;

/// <summary>Base of NetServer's event args (netstandard has no way to suppress context flow).</summary>
internal abstract class SocketEventArgsBase : SocketAsyncEventArgs
{
}
