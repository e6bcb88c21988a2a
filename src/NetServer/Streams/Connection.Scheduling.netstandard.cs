
namespace NetServer.Streams;

internal sealed partial class Connection
{
    private static readonly WaitCallback s_scheduledFlush = static state => ((Connection)state!).FlushLoop();

    private void ScheduleFlush()
    {
        if (!PostFlush())
            ThreadPool.UnsafeQueueUserWorkItem(s_scheduledFlush, this);
    }
}
