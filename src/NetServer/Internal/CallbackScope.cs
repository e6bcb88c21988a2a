
namespace NetServer.Internal;

/// <summary>
/// Marks the threads that are running a user hook (<c>On*</c>), and which connection's hook the
/// outermost one is.
/// </summary>
/// <remarks>
/// <para>Blocking calls such as <c>Disconnect()</c>, <c>Stop()</c> and the synchronous <c>Send</c>
/// wait for the engine only when they are not made from inside a hook: a hook that waited for
/// another connection's hook could form a cycle, so from a hook they start the work and return at
/// once.</para>
/// <para>Sends a connection makes during its own hook are gathered: the hook's first send goes
/// straight out (from the caller's bytes, without a copy: an echo or a lone answer costs what it
/// always did); a later one that finds the send queue idle takes the flusher role without sending
/// (the connection is <em>corked</em>), the ones after it only append, and they go out in one
/// socket write when the outermost hook returns (see <see cref="Exit"/>). A hook answering many
/// small messages one send each then costs two system calls, not one per message. Only the connection whose hook runs is corked: a send to
/// another connection still goes out at once, so a hook that waits for that one's answer cannot
/// deadlock on its own corked bytes.</para>
/// </remarks>
internal static class CallbackScope
{
    [ThreadStatic]
    private static int t_depth;

    [ThreadStatic]
    private static Connection? t_owner; // whose hook the outermost scope runs (null: a server hook)

    [ThreadStatic]
    private static bool t_corked;      // the owner took the flusher role to gather this hook's sends

    [ThreadStatic]
    private static bool t_receiving;   // the outermost hook is the owner's delivery of received bytes

    [ThreadStatic]
    private static bool t_sentDirect;  // the owner's first send of this hook went straight out

    public static bool IsActive => t_depth != 0;

    /// <summary>Enters a hook that belongs to no single connection (a server hook, a timer).</summary>
    public static void Enter() => Enter(null);

    /// <summary>Enters a hook of <paramref name="owner"/>: its sends made inside are gathered.</summary>
    public static void Enter(Connection? owner) => Enter(owner, receiving: false);

    /// <summary>
    /// Enters a hook of <paramref name="owner"/>; <paramref name="receiving"/> marks the delivery of
    /// received bytes, whose sends are the connection's answers (see <see cref="IsAnswering"/>).
    /// </summary>
    public static void Enter(Connection? owner, bool receiving)
    {
        if (t_depth++ == 0)
        {
            t_owner = owner;
            t_receiving = receiving;
            t_sentDirect = false;
        }
    }

    /// <summary>Leaves a hook; the outermost exit sends what the owner's hook gathered.</summary>
    public static void Exit()
    {
        if (t_depth == 1 && t_corked)
        {
            // Still inside (depth 1) while flushing: OnSent/OnEmpty raised by the flush nest
            // normally, and sends they make on the owner only append to the queue being sent.
            t_corked = false;
            try
            {
                t_owner!.Uncork();
            }
            finally
            {
                t_owner = null;
                t_depth = 0;
            }

            return;
        }

        if (--t_depth == 0)
            t_owner = null;
    }

    /// <summary>True when the current thread runs a hook of <paramref name="connection"/> (directly or nested).</summary>
    public static bool IsGathering(Connection connection) => t_depth != 0 && ReferenceEquals(t_owner, connection);

    /// <summary>
    /// Whether a send of <paramref name="connection"/> that finds its queue idle should be gathered
    /// rather than go out at once: only inside the connection's own hook, and not the hook's first
    /// send. The first goes straight out from the caller's bytes (no copy, no wait: an echo or a
    /// lone answer costs what it did before gathering); the ones after it are gathered.
    /// </summary>
    public static bool ShouldGather(Connection connection)
    {
        if (!IsGathering(connection))
            return false;
        if (t_sentDirect)
            return true;
        t_sentDirect = true;
        return false;
    }

    /// <summary>
    /// The hook of <paramref name="connection"/> running on this thread will send more after its
    /// next send (a protocol answering one of several pipelined requests it received at once): the
    /// next send is gathered too, instead of going straight out alone, so all the answers leave in
    /// one write when the hook returns. Does nothing outside the connection's own hook.
    /// </summary>
    public static void ExpectMoreSends(Connection connection)
    {
        if (IsGathering(connection))
            t_sentDirect = true;
    }

    /// <summary>True when the current thread delivers received bytes of <paramref name="connection"/>: a send now answers them.</summary>
    public static bool IsAnswering(Connection connection) => t_receiving && IsGathering(connection);

    /// <summary>The owner took the flusher role to gather; the outermost exit uncorks it.</summary>
    public static void MarkCorked() => t_corked = true;
}
