
namespace NetServer.Transport;

internal static class ThreadPoolScheduler
{
    private static readonly WaitCallback s_invoke = static state =>
    {
        var (action, argument) = ((Action<object?>, object?))state!;
        action(argument);
    };

    // Only the rare registration race lands here, so the boxed tuple is not on a hot path.
    public static void Schedule(Action<object?> action, object? state) =>
        ThreadPool.UnsafeQueueUserWorkItem(s_invoke, (action, state));
}
