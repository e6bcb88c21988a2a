
namespace NetServer;

public partial class DeadlineTimer
{
    // No IThreadPoolWorkItem before .NET Core 3.0: the runtime wraps each queued callback in a
    // small object. Only the caller that set _dispatching queues it, so it is never queued twice at once.
    private sealed partial class Alarm
    {
        private static readonly WaitCallback s_run = static state => ((Alarm)state!)._owner.RunOutcomes();

        private void QueueOnPool() => ThreadPool.UnsafeQueueUserWorkItem(s_run, this);
    }
}
