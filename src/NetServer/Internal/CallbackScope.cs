using System;

namespace NetServer.Internal;

/// <summary>
/// Marks the threads that are running a user hook (<c>On*</c>). Blocking calls such as
/// <c>Disconnect()</c>, <c>Stop()</c> and the synchronous <c>Send</c> wait for the engine only
/// when they are not made from inside a hook: a hook that waited for another connection's hook
/// could form a cycle, so from a hook they start the work and return at once.
/// </summary>
internal static class CallbackScope
{
    [ThreadStatic]
    private static int t_depth;

    public static bool IsActive => t_depth != 0;

    public static void Enter() => t_depth++;

    public static void Exit() => t_depth--;
}
