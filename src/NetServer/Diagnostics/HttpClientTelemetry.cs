using System.Diagnostics;
using System.Diagnostics.Metrics;
using NetServer.Http;

namespace NetServer.Diagnostics;

/// <summary>
/// The metrics and traces of the awaited requests of one HTTP client (<see cref="HttpClientEx"/>,
/// <c>HttpsClientEx</c>): <c>http.client.request.duration</c>, <c>http.client.active_requests</c> and a
/// Client activity whose W3C <c>traceparent</c> goes out with the request, with OpenTelemetry's
/// semantic-convention tags. The constant tags are worked out once per client; a request's state is a
/// <see cref="Recording"/> on its caller's stack, so requests never share it. With nobody listening,
/// <see cref="Start"/> costs two <c>Enabled</c> checks and a <c>HasListeners</c> call.
/// </summary>
internal sealed class HttpClientTelemetry
{
    private static readonly Histogram<double> s_duration = NetServerTelemetry.Meter.CreateHistogram<double>(
        "http.client.request.duration", "s", "Duration of HTTP client requests, from the call (connecting included) to the whole response.");

    private static readonly UpDownCounter<long> s_active = NetServerTelemetry.Meter.CreateUpDownCounter<long>(
        "http.client.active_requests", "{request}", "HTTP client requests waiting for their response right now.");

    private readonly string _address;
    private readonly object _port;
    private readonly string _scheme;
    private readonly string _origin; // scheme://host:port of url.full

    public HttpClientTelemetry(EndPoint endpoint, string scheme)
    {
        (_address, var port) = endpoint switch
        {
            DnsEndPoint dns => (dns.Host, dns.Port),
            IPEndPoint ip => (ip.Address.ToString(), ip.Port),
            _ => (endpoint.ToString() ?? "unknown", 0),
        };
        _port = port;
        _scheme = scheme;
        var host = endpoint is IPEndPoint { AddressFamily: AddressFamily.InterNetworkV6 } ? $"[{_address}]" : _address;
        _origin = $"{scheme}://{host}:{port}";
    }

    /// <summary>One request's state, kept by the caller.</summary>
    public struct Recording
    {
        internal long Start;
        internal bool CountedActive;
        internal Activity? Activity;
        internal string Method;
    }

    /// <summary>Starts timing <paramref name="request"/> if anyone listens; <paramref name="traceParent"/> is the header value to send, or null.</summary>
    public Recording Start(HttpRequest request, out string? traceParent)
    {
        traceParent = null;
        var recording = default(Recording);
        var metrics = s_duration.Enabled || s_active.Enabled;
        var tracing = NetServerTelemetry.ActivitySource.HasListeners();
        if (!metrics && !tracing)
            return recording;
        recording.Method = HttpKnownNames.TryGetMethod(request.MethodBytes, out var known) ? known : "_OTHER";
        recording.CountedActive = s_active.Enabled;
        if (recording.CountedActive)
            s_active.Add(1, Tags(recording.Method));
        if (tracing)
        {
            recording.Activity = StartActivity(request, recording.Method);
            // The server continues this trace, unless the application set its own traceparent.
            if (recording.Activity is { IdFormat: ActivityIdFormat.W3C } activity && !request.Store.TryGetHeader("traceparent"u8, out _))
                traceParent = activity.Id;
        }

        recording.Start = Stopwatch.GetTimestamp();
        return recording;
    }

    /// <summary>The request ended: answered with <paramref name="status"/>, or failed with <paramref name="error"/>.</summary>
    public void End(ref Recording recording, int status, Exception? error)
    {
        if (recording.Start == 0)
            return;
        var elapsed = (Stopwatch.GetTimestamp() - recording.Start) / (double)Stopwatch.Frequency;
        recording.Start = 0;
        var tags = Tags(recording.Method);
        if (recording.CountedActive)
            s_active.Add(-1, tags);
        // semconv: a client request failed when it got no response or a status of 400 or more.
        var errorType = error is not null ? error.GetType().FullName : status >= 400 ? status.ToString(System.Globalization.CultureInfo.InvariantCulture) : null;
        if (s_duration.Enabled)
        {
            tags.Add("network.protocol.version", "1.1");
            if (status > 0)
                tags.Add("http.response.status_code", HttpRequestTelemetry.Boxed(status));
            if (errorType is not null)
                tags.Add("error.type", errorType);
            s_duration.Record(elapsed, tags);
        }

        if (recording.Activity is { } activity)
        {
            if (status > 0)
                activity.SetTag("http.response.status_code", HttpRequestTelemetry.Boxed(status));
            if (errorType is not null)
            {
                activity.SetTag("error.type", errorType);
                activity.SetStatus(ActivityStatusCode.Error, error?.Message);
            }

            activity.Stop();
            recording.Activity = null;
        }
    }

    private TagList Tags(string method) => new()
    {
        { "http.request.method", method },
        { "server.address", _address },
        { "server.port", _port },
        { "url.scheme", _scheme },
    };

    private Activity? StartActivity(HttpRequest request, string method)
    {
        var activity = NetServerTelemetry.ActivitySource.StartActivity(method == "_OTHER" ? "HTTP" : method, ActivityKind.Client);
        if (activity is { IsAllDataRequested: true })
        {
            foreach (var tag in Tags(method))
                activity.SetTag(tag.Key, tag.Value);
            var target = request.Url;
            var query = target.IndexOf('?');
            // The query may carry secrets: left out, as .NET's HttpClient does by default.
            activity.SetTag("url.full", _origin + (query < 0 ? target : target.Substring(0, query)));
        }

        return activity;
    }
}
