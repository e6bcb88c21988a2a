
namespace NetServer.Streams;

// The connection is its own thread-pool work item: scheduling a flush allocates nothing.
// Only the holder of the flusher role schedules, so the item is never queued twice at once.
internal sealed partial class Connection : IThreadPoolWorkItem
{
    void IThreadPoolWorkItem.Execute() => FlushLoop();

    private void ScheduleFlush() => ThreadPool.UnsafeQueueUserWorkItem(this, preferLocal: false);
}
