
namespace NetServer;

public partial class DeadlineTimer
{
    // The alarm is its own work item: queueing the outcomes allocates nothing. Only the caller
    // that set _dispatching queues it, so it is never queued twice at once.
    private sealed partial class Alarm : IThreadPoolWorkItem
    {
        void IThreadPoolWorkItem.Execute() => _owner.RunOutcomes();

        private void QueueOnPool() => ThreadPool.UnsafeQueueUserWorkItem(this, preferLocal: false);
    }
}
