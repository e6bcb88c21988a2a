using System;
using NetServer.Timers;

namespace NetServer.P2P.Internal;

/// <summary>A deadline on the shared clock (<see cref="TimerWheel.Shared"/>) that calls its owner back once when it expires, unless disarmed first.</summary>
internal sealed class Deadline(Action<object?> expired, object? state) : TimerEntry
{
    protected override void OnExpired() => expired(state);
}
