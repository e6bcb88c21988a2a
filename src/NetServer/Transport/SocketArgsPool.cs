
namespace NetServer.Transport;

/// <summary>
/// The process-wide pool of <see cref="SocketAwaitableEventArgs"/> for the operations a connection
/// needs only now and then (an async send when the kernel buffer is full, a connect, an accept), so
/// an idle connection holds none. It keeps as many as were in use at once lately (thousands of
/// connections each with an async send in flight reuse theirs instead of creating and disposing
/// them), at most <see cref="MaxKept"/>, and lets go of idle ones slowly: every
/// <see cref="TrimInterval"/>, half of those unused through the whole interval are disposed.
/// </summary>
internal static class SocketArgsPool
{
    /// <summary>The most free args kept (a few MiB at most: a fresh one is about 250 bytes); a return past it disposes the args.</summary>
    internal const int MaxKept = 16384;

    /// <summary>How often args that stayed unused are let go of, half of them at a time.</summary>
    internal static readonly TimeSpan TrimInterval = TimeSpan.FromSeconds(10);

    private static readonly ElasticPool<SocketAwaitableEventArgs> s_pool = new(
        static () => new SocketAwaitableEventArgs(), static args => args.Dispose(), MaxKept, TrimInterval);

    public static SocketAwaitableEventArgs Rent() => s_pool.Rent();

    public static void Return(SocketAwaitableEventArgs args)
    {
        args.ClearBuffers();
        s_pool.Return(args);
    }
}
