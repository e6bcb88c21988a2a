namespace NetServer.Diagnostics;

/// <summary>
/// What the multicast under way on this thread carries, so the server's multicast loop (which only
/// sees bytes) can count a message for each session it reaches: set by the protocol servers
/// (byte messages, WebSocket data frames) around their call, read once by the loop before it yields.
/// A raw <c>Multicast</c> of bytes counts no message.
/// </summary>
internal static class MulticastKind
{
    [ThreadStatic]
    private static int t_kindPlusOne; // 0: raw bytes

    /// <summary>The <see cref="MessageMetrics"/> kind of the multicast under way on this thread, -1 for none.</summary>
    public static int Current => t_kindPlusOne - 1;

    /// <summary>Marks the multicasts this thread makes until the scope is disposed as messages of <paramref name="kind"/>.</summary>
    public static Scope Of(int kind)
    {
        var outer = t_kindPlusOne;
        t_kindPlusOne = kind + 1;
        return new Scope(outer);
    }

    public readonly struct Scope(int outer) : IDisposable
    {
        public void Dispose() => t_kindPlusOne = outer;
    }
}
