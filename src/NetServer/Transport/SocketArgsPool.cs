using System.Threading;

namespace NetServer.Transport;

/// <summary>
/// A bounded, process-wide pool of <see cref="SocketAwaitableEventArgs"/> for the operations a
/// connection needs only now and then (an async send when the kernel buffer is full, a connect,
/// an accept), so an idle connection holds none. Past the bound, returned args are disposed.
/// </summary>
internal static class SocketArgsPool
{
    private static readonly SocketAwaitableEventArgs?[] s_items = new SocketAwaitableEventArgs?[256];

    public static SocketAwaitableEventArgs Rent()
    {
        var items = s_items;
        for (var i = 0; i < items.Length; i++)
        {
            var item = Volatile.Read(ref items[i]);
            if (item is not null && Interlocked.CompareExchange(ref items[i], null, item) == item)
                return item;
        }

        return new SocketAwaitableEventArgs();
    }

    public static void Return(SocketAwaitableEventArgs args)
    {
        args.ClearBuffers();
        var items = s_items;
        for (var i = 0; i < items.Length; i++)
        {
            if (Volatile.Read(ref items[i]) is null && Interlocked.CompareExchange(ref items[i], args, null) is null)
                return;
        }

        args.Dispose();
    }
}
