using System;
using System.Threading;
using System.Threading.Tasks;

namespace NetServer.P2P.Internal;

/// <summary><c>Task.WaitAsync</c> for both targets (netstandard2.1 has none): the task's result, a <see cref="TimeoutException"/>, or the token's cancellation.</summary>
internal static class TaskWaits
{
    public static async Task<T> WaitAsync<T>(Task<T> task, TimeSpan timeout, CancellationToken cancellationToken)
    {
#if NET
        return await task.WaitAsync(timeout, cancellationToken).ConfigureAwait(false);
#else
        using var stop = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        var delay = Task.Delay(timeout, stop.Token);
        if (await Task.WhenAny(task, delay).ConfigureAwait(false) == task)
        {
            stop.Cancel();
            return await task.ConfigureAwait(false);
        }

        cancellationToken.ThrowIfCancellationRequested();
        throw new TimeoutException();
#endif
    }
}
