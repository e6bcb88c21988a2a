namespace NetServer;

/// <summary>
/// An HTTP/1.1 server over TCP: each connection is an <see cref="HttpSession"/> (override
/// <see cref="CreateSession"/> to return your own), static files are served from <see cref="Cache"/>
/// (<see cref="AddStaticContent"/>), and every request is held to <see cref="Limits"/>. See docs/http.md.
/// </summary>
public class HttpServer : TcpServer
{
    /// <summary>A server on <paramref name="address"/>:<paramref name="port"/> (port 0 picks a free port).</summary>
    public HttpServer(IPAddress address, int port)
        : base(address, port)
    {
    }

    /// <summary>A server on an IP address or host name given as text.</summary>
    public HttpServer(string address, int port)
        : base(address, port)
    {
    }

    /// <summary>A server on the address <paramref name="endpoint"/> resolves to.</summary>
    public HttpServer(DnsEndPoint endpoint)
        : base(endpoint)
    {
    }

    /// <summary>A server on <paramref name="endpoint"/>.</summary>
    public HttpServer(IPEndPoint endpoint)
        : base(endpoint)
    {
    }

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
    protected override TcpSession CreateSession() => new HttpSession(this);

    /// <inheritdoc/>
    protected override void Dispose(bool disposingManagedResources)
    {
        if (disposingManagedResources)
            Cache.Dispose();
        base.Dispose(disposingManagedResources);
    }
}
