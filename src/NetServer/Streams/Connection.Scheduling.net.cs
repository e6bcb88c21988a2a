
namespace NetServer.Streams;

// The connection is its own thread-pool work item: scheduling a flush allocates nothing (on a
// loop that runs its hooks, the flush goes to the loop: see PostFlush).
// Only the holder of the flusher role schedules, so the item is never queued twice at once.
internal sealed partial class Connection : IThreadPoolWorkItem
{
    void IThreadPoolWorkItem.Execute() => FlushLoop();

    private void ScheduleFlush()
    {
        if (!PostFlush())
            ThreadPool.UnsafeQueueUserWorkItem(this, preferLocal: false);
    }
}
