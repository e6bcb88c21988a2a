using System;
using System.Threading;

namespace NetServer.Transport;

internal static class ThreadPoolScheduler
{
    public static void Schedule(Action<object?> action, object? state) =>
        ThreadPool.UnsafeQueueUserWorkItem(action, state, preferLocal: true);
}
