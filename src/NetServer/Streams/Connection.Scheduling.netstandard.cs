
namespace NetServer.Streams;

internal sealed partial class Connection
{
    private static readonly WaitCallback s_scheduledFlush = static state => ((Connection)state!).FlushLoop();

    private void ScheduleFlush() => ThreadPool.UnsafeQueueUserWorkItem(s_scheduledFlush, this);
}
