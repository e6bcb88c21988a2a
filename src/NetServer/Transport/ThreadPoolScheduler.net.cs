
namespace NetServer.Transport;

internal static class ThreadPoolScheduler
{
    /// <summary>Runs <paramref name="action"/> on the thread pool without capturing the execution context (no allocation).</summary>
    public static void Schedule(Action<object?> action, object? state) =>
        ThreadPool.UnsafeQueueUserWorkItem(action, state, preferLocal: false);
}
