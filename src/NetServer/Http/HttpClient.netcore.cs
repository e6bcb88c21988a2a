namespace NetServer;

public partial class HttpClient
{
    /// <summary>A client of the Unix domain socket <paramref name="endpoint"/> (a request without a Host field gets "Host: localhost").</summary>
    public HttpClient(UnixDomainSocketEndPoint endpoint)
        : base(endpoint) => _http = Attach(this);
}
