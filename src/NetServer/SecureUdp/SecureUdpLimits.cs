namespace NetServer.SecureUdp;

/// <summary>
/// The limits a session runs with and its clock: the constants of <see cref="SecureUdpConstants"/>
/// in production (<see cref="Default"/>); tests make smaller ones, and a clock they move, to reach
/// rekeying and expiry without sealing millions of datagrams or waiting minutes.
/// </summary>
internal sealed partial class SecureUdpLimits
{
    public static readonly SecureUdpLimits Default = new();

    public long RekeyAfterDatagrams { get; set; } = SecureUdpConstants.RekeyAfterDatagrams;

    public long RekeyAfterMilliseconds { get; set; } = SecureUdpConstants.RekeyAfterMilliseconds;

    public long PreviousEpochMilliseconds { get; set; } = SecureUdpConstants.PreviousEpochMilliseconds;

    public int MaxEpochsAhead { get; set; } = SecureUdpConstants.MaxEpochsAhead;

    public long CatchUpIntervalMilliseconds { get; set; } = SecureUdpConstants.CatchUpIntervalMilliseconds;

    public long SessionFailuresPerSecond { get; set; } = SecureUdpConstants.SessionFailuresPerSecond;

    public long TableFailuresPerSecond { get; set; } = SecureUdpConstants.TableFailuresPerSecond;

    /// <summary>When set, replaces the algorithm's integrity limit (tests reach it without 2^36 forgeries).</summary>
    public long? IntegrityLimit { get; set; }

    /// <summary>Milliseconds on a monotonic clock (read once per datagram sealed or opened; the limits need no finer grain than the system tick).</summary>
    public Func<long> Clock { get; set; } = SystemClock;
}
