using Xunit;

namespace NetServer.Tests.Streams;

/// <summary>
/// Runs <see cref="ParkedSenderStressTests"/> alone: its spinning threads take every core for a few
/// seconds and would starve timing-sensitive tests running beside it (the full run after it was
/// added saw a timer-wheel race test's re-arming threads fall behind, plausibly for that).
/// </summary>
[CollectionDefinition(nameof(ParkedSenderStressTests), DisableParallelization = true)]
public sealed class ParkedSenderStressCollection;
