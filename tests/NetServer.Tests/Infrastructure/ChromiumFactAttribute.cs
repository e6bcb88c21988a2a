using Xunit;

namespace NetServer.Tests.Infrastructure;

/// <summary>A fact that loads pages in headless Chromium (<see cref="HeadlessBrowser"/>); skipped with the reason where Chromium cannot be run.</summary>
public sealed class ChromiumFactAttribute : FactAttribute
{
    public ChromiumFactAttribute()
    {
        if (HeadlessBrowser.Failure is { } failure)
            Skip = failure;
    }
}
