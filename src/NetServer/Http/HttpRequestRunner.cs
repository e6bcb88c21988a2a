namespace NetServer.Http;

/// <summary>
/// The awaitable request of <see cref="HttpClientEx"/> and <c>HttpsClientEx</c>, written once:
/// connects when needed (reusing a kept-alive connection), sends one request at a time, and
/// completes with the response, a <see cref="TimeoutException"/> (the connection is closed, so a
/// late response cannot be taken for the next request's), an <see cref="OperationCanceledException"/>,
/// or an <see cref="System.IO.IOException"/> when the connection fails or the response is malformed.
/// </summary>
internal sealed class HttpRequestRunner : IDisposable
{
    private static readonly CancellationToken s_now = new(canceled: true); // a close that does not wait

    private readonly StreamClient _client;
    private readonly HttpClientProtocol _http;
    private readonly Diagnostics.HttpClientTelemetry _telemetry;
    private readonly SemaphoreSlim _turn = new(1, 1);
    private TaskCompletionSource<HttpResponse>? _pending;

    public HttpRequestRunner(StreamClient client, HttpClientProtocol http, string scheme = "http")
    {
        _client = client;
        _http = http;
        _telemetry = new Diagnostics.HttpClientTelemetry(client.Endpoint, scheme);
    }

    /// <summary>The default time a request may take, connect included.</summary>
    public static readonly TimeSpan DefaultTimeout = TimeSpan.FromMinutes(1);

    public async Task<HttpResponse> SendAsync(HttpRequest request, TimeSpan? timeout, CancellationToken cancellationToken)
    {
        if (request is null)
            ThrowHelper.ThrowArgumentNull(nameof(request));
        var recording = _telemetry.Start(request, out var traceParent);
        try
        {
            var response = await SendCoreAsync(request, traceParent, timeout, cancellationToken).ConfigureAwait(false);
            _telemetry.End(ref recording, response.Status, null);
            return response;
        }
        catch (Exception exception)
        {
            _telemetry.End(ref recording, 0, exception);
            throw;
        }
    }

    private async Task<HttpResponse> SendCoreAsync(HttpRequest request, string? traceParent, TimeSpan? timeout, CancellationToken cancellationToken)
    {
        var limit = timeout ?? DefaultTimeout;
        using var deadline = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        if (limit != Timeout.InfiniteTimeSpan)
            deadline.CancelAfter(limit);

        await _turn.WaitAsync(deadline.Token).ConfigureAwait(false);
        try
        {
            if (!_client.IsConnected)
            {
                // The connection's receive loop starts here and keeps the context it starts in for the
                // connection's life: not this request's activity, which would parent what later hooks start.
                var activity = System.Diagnostics.Activity.Current;
                System.Diagnostics.Activity.Current = null;
                try
                {
                    await _client.ConnectAsync(deadline.Token).ConfigureAwait(false);
                }
                catch (SocketException exception)
                {
                    throw new System.IO.IOException($"Could not connect to {_client.Endpoint}: {exception.Message}", exception);
                }
                finally
                {
                    System.Diagnostics.Activity.Current = activity;
                }
            }

            var pending = new TaskCompletionSource<HttpResponse>(TaskCreationOptions.RunContinuationsAsynchronously);
            Volatile.Write(ref _pending, pending);
            if (_http.SendRequest(request, blocking: false, traceParent) == 0)
                throw new System.IO.IOException("The request could not be sent: the connection is closed.");

            using (deadline.Token.Register(static state => ((TaskCompletionSource<HttpResponse>)state!).TrySetCanceled(), pending))
            {
                try
                {
                    return await pending.Task.ConfigureAwait(false);
                }
                catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
                {
                    await AbortAsync().ConfigureAwait(false); // its response may still come: it must not answer the next request
                    throw new TimeoutException($"No response within {limit}.");
                }
                catch (OperationCanceledException)
                {
                    await AbortAsync().ConfigureAwait(false);
                    throw;
                }
            }
        }
        catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
        {
            throw new TimeoutException($"No response within {limit}.");
        }
        finally
        {
            Volatile.Write(ref _pending, null);
            _turn.Release();
        }
    }

    /// <summary>
    /// Closes the connection at once, without the graceful close's wait for the server's end: a
    /// server still working on the request may not read (an HTTP server pauses receiving while a
    /// request is unanswered), and the wait would add the whole disconnect timeout to the timeout.
    /// </summary>
    private Task<bool> AbortAsync() => _client.DisconnectAsync(s_now);

    public void Dispose() => _turn.Dispose();

    public void Received(HttpResponse response) => Volatile.Read(ref _pending)?.TrySetResult(response);

    public void Failed(string error) => Volatile.Read(ref _pending)?.TrySetException(new System.IO.IOException(error));

    public void Disconnected() => Volatile.Read(ref _pending)?.TrySetException(new System.IO.IOException("The connection closed before the response arrived."));
}
