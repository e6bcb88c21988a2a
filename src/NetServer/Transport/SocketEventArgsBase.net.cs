
namespace NetServer.Transport;

/// <summary>
/// Base of NetServer's event args. On .NET 5+ the execution context is not captured per
/// operation: the engine's continuations never depend on ambient state, and capturing it costs
/// time on every receive and send.
/// </summary>
internal abstract class SocketEventArgsBase : SocketAsyncEventArgs
{
    protected SocketEventArgsBase()
        : base(unsafeSuppressExecutionContextFlow: true)
    {
    }
}
