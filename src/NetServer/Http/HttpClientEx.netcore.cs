using NetServer.Http;

namespace NetServer;

public partial class HttpClientEx
{
    /// <summary>A client of the Unix domain socket <paramref name="endpoint"/>.</summary>
    public HttpClientEx(UnixDomainSocketEndPoint endpoint)
        : base(endpoint) => Runner = new HttpRequestRunner(this, Http);
}
