
namespace NetServer;

// What HttpClientEx (TCP) and HttpsClientEx (TLS) have in common: awaited requests, run by the HttpRequestRunner each holds.
// Not compiled as it is: SharedMembersGenerator (src/NetServer.Generators) copies this class's
// members into a partial declaration of each class named below.
[SharedMembers("HttpClientEx", "HttpsClientEx")]
internal partial class HttpClientExMembers
{
    /// <summary>Sends <paramref name="request"/> and completes with its response (default timeout 1 minute, connect included).</summary>
    /// <exception cref="TimeoutException">No response within <paramref name="timeout"/>; the connection is closed.</exception>
    /// <exception cref="System.IO.IOException">The connection failed or closed, or the response was malformed.</exception>
    public Task<HttpResponse> SendRequest(HttpRequest request, TimeSpan? timeout = null) => Runner!.SendAsync(request, timeout, CancellationToken.None);

    /// <summary>As <see cref="SendRequest(HttpRequest, TimeSpan?)"/>, cancellable (the connection is closed when cancelled while waiting).</summary>
    public Task<HttpResponse> SendRequest(HttpRequest request, TimeSpan? timeout, CancellationToken cancellationToken) => Runner!.SendAsync(request, timeout, cancellationToken);

    /// <summary>Sends a HEAD request for <paramref name="url"/>.</summary>
    public Task<HttpResponse> SendHeadRequest(string url, TimeSpan? timeout = null) => SendRequest(Request.MakeHeadRequest(url), timeout);

    /// <summary>Sends a GET request for <paramref name="url"/>.</summary>
    public Task<HttpResponse> SendGetRequest(string url, TimeSpan? timeout = null) => SendRequest(Request.MakeGetRequest(url), timeout);

    /// <summary>Sends a POST request with <paramref name="content"/> to <paramref name="url"/>.</summary>
    public Task<HttpResponse> SendPostRequest(string url, string content, TimeSpan? timeout = null) => SendRequest(Request.MakePostRequest(url, content), timeout);

    /// <summary>Sends a PUT request with <paramref name="content"/> to <paramref name="url"/>.</summary>
    public Task<HttpResponse> SendPutRequest(string url, string content, TimeSpan? timeout = null) => SendRequest(Request.MakePutRequest(url, content), timeout);

    /// <summary>Sends a DELETE request for <paramref name="url"/>.</summary>
    public Task<HttpResponse> SendDeleteRequest(string url, TimeSpan? timeout = null) => SendRequest(Request.MakeDeleteRequest(url), timeout);

    /// <summary>Sends an OPTIONS request for <paramref name="url"/>.</summary>
    public Task<HttpResponse> SendOptionsRequest(string url, TimeSpan? timeout = null) => SendRequest(Request.MakeOptionsRequest(url), timeout);

    /// <summary>Sends a TRACE request for <paramref name="url"/>.</summary>
    public Task<HttpResponse> SendTraceRequest(string url, TimeSpan? timeout = null) => SendRequest(Request.MakeTraceRequest(url), timeout);
}
