
namespace NetServer;

// What HttpServer (TCP) and HttpsServer (TLS) have in common: static content and the limits every session enforces.
// Not compiled as it is: SharedMembersGenerator (src/NetServer.Generators) copies this class's
// members into a partial declaration of each class named below.
[SharedMembers("HttpServer", "HttpsServer")]
internal partial class HttpServerMembers
{
    /// <summary>The static content cache: files added by <see cref="AddStaticContent"/>, served before a session's hooks see a request.</summary>
    public FileCache Cache { get; } = new();

    /// <summary>The limits every session enforces (Kestrel's defaults); change them before <c>Start</c>.</summary>
    public HttpLimits Limits { get; } = new();

    /// <summary>
    /// Serves the files under <paramref name="path"/> (watched: changes are picked up) at URLs
    /// starting with <paramref name="prefix"/>, with <paramref name="timeout"/> as their
    /// Cache-Control max-age (default 1 hour). See docs/http-static.md.
    /// </summary>
    public void AddStaticContent(string path, string prefix = "/", string filter = "*.*", TimeSpan? timeout = null) =>
        Cache.InsertStaticPath(path, prefix, filter, timeout ?? TimeSpan.FromHours(1));

    /// <summary>Stops serving the files under <paramref name="path"/>.</summary>
    public void RemoveStaticContent(string path) => Cache.RemovePath(path);

    /// <summary>Stops serving all static content.</summary>
    public void ClearStaticContent() => Cache.Clear();

    /// <inheritdoc/>
    protected override void Dispose(bool disposingManagedResources)
    {
        if (disposingManagedResources)
            Cache.Dispose();
        base.Dispose(disposingManagedResources);
    }
}
