using System.Diagnostics;
using System.Diagnostics.Metrics;
using NetServer.Http;

namespace NetServer.Diagnostics;

/// <summary>
/// The metrics and trace of the HTTP request a server connection is answering (one at a time, so
/// one of these per <see cref="HttpServerProtocol"/>): <c>http.server.request.duration</c>,
/// <c>http.server.active_requests</c> and a Server activity, with OpenTelemetry's semantic-convention
/// tags. With nobody listening, <see cref="Start"/> costs two <c>Enabled</c> checks and a
/// <c>HasListeners</c> call and nothing is allocated; the tags are constants and the server's
/// <see cref="EndpointTags"/>, built in a <see cref="TagList"/> on the stack.
/// </summary>
internal struct HttpRequestTelemetry
{
    private static readonly Histogram<double> s_duration = NetServerTelemetry.Meter.CreateHistogram<double>(
        "http.server.request.duration", "s", "Duration of HTTP server requests, from the end of the head to the end of the answer.");

    private static readonly UpDownCounter<long> s_active = NetServerTelemetry.Meter.CreateUpDownCounter<long>(
        "http.server.active_requests", "{request}", "HTTP server requests being answered right now.");

    private static readonly object?[] s_statusCodes = new object?[600]; // boxed once each, not per measurement

    private long _start; // 0: this request is not recorded
    private bool _countedActive;
    private Activity? _activity;
    private StreamConnection? _owner;
    private string? _method;
    private string? _scheme;
    private string? _version;

    /// <summary>A request head was parsed: starts timing it (and its activity) if anyone listens.</summary>
    public void Start(StreamConnection owner, HttpMessageStore request, int minorVersion)
    {
        var metrics = s_duration.Enabled || s_active.Enabled;
        var tracing = NetServerTelemetry.ActivitySource.HasListeners();
        if (!metrics && !tracing)
            return;
        End(0, "superseded"); // a request never ended (should not happen): its series is closed first
        _owner = owner;
        _method = HttpKnownNames.TryGetMethod(request.MethodBytes, out var known) ? known : "_OTHER";
        _scheme = owner.CurrentConnection?.IsSecured == true ? "https" : "http";
        _version = minorVersion == 0 ? "1.0" : "1.1";
        _countedActive = s_active.Enabled;
        if (_countedActive)
            s_active.Add(1, Tags());
        if (tracing)
            _activity = StartActivity(request);
        Volatile.Write(ref _start, Stopwatch.GetTimestamp());
    }

    /// <summary>Makes the request's activity current (around the application's hooks); false when there is none.</summary>
    public readonly bool Enter(out Activity? previous)
    {
        previous = null;
        if (_activity is null)
            return false;
        previous = Activity.Current;
        Activity.Current = _activity;
        return true;
    }

    /// <summary>
    /// The request ended: answered with <paramref name="status"/>, or failed with
    /// <paramref name="errorType"/> (status 0 when no answer went out). Once per request: a second
    /// call (the disconnect after the answer) does nothing.
    /// </summary>
    public void End(int status, string? errorType)
    {
        var start = Interlocked.Exchange(ref _start, 0);
        if (start == 0)
            return;
        var activity = _activity;
        _activity = null;
        var tags = Tags();
        if (_countedActive)
            s_active.Add(-1, tags);
        if (errorType is null && status >= 500)
            errorType = status.ToString(System.Globalization.CultureInfo.InvariantCulture); // semconv: the status code
        if (s_duration.Enabled)
        {
            if (status > 0)
                tags.Add("http.response.status_code", Boxed(status));
            if (errorType is not null)
                tags.Add("error.type", errorType);
            s_duration.Record((Stopwatch.GetTimestamp() - start) / (double)Stopwatch.Frequency, tags);
        }

        if (activity is not null)
            StopActivity(activity, status, errorType);
    }

    // At most 8 tags with the status code (TagList keeps 8 inline; a ninth allocates an array per
    // request): network.protocol.name is left out, as semconv allows when it is "http".
    private readonly TagList Tags()
    {
        var tags = new TagList
        {
            { "http.request.method", _method },
            { "url.scheme", _scheme },
            { "network.protocol.version", _version },
        };
        _owner?.MetricTags?.AddTo(ref tags);
        return tags;
    }

    private readonly Activity? StartActivity(HttpMessageStore request)
    {
        ActivityContext parent = default;
        if (request.TryGetHeader("traceparent"u8, out var traceParent))
        {
            string? traceState = request.TryGetHeader("tracestate"u8, out var state) ? TextEncoding.Decode(state) : null;
            ActivityContext.TryParse(TextEncoding.Decode(traceParent), traceState, isRemote: true, out parent);
        }

        // Not left current on the I/O thread: Enter makes it current around the application's hooks.
        var previous = Activity.Current;
        var activity = NetServerTelemetry.ActivitySource.StartActivity(
            _method is null or "_OTHER" ? "HTTP" : _method, ActivityKind.Server, parent);
        Activity.Current = previous;
        if (activity is { IsAllDataRequested: true })
        {
            foreach (var tag in Tags())
                activity.SetTag(tag.Key, tag.Value);
            activity.SetTag("url.path", request.TargetText);
        }

        return activity;
    }

    private static void StopActivity(Activity activity, int status, string? errorType)
    {
        if (status > 0)
            activity.SetTag("http.response.status_code", Boxed(status));
        if (errorType is not null)
        {
            activity.SetTag("error.type", errorType);
            activity.SetStatus(ActivityStatusCode.Error);
        }

        var current = Activity.Current;
        activity.Stop();
        if (!ReferenceEquals(current, activity))
            Activity.Current = current; // Stop makes the parent current; this thread had another one
    }

#pragma warning disable CA1859 // an int boxed once per status code, on purpose
    internal static object Boxed(int status) =>
        status > 0 && status < s_statusCodes.Length ? s_statusCodes[status] ??= status : status;
#pragma warning restore CA1859
}
