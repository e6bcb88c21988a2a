using System;
using System.Collections.Concurrent;
using System.Diagnostics;
using System.Linq;
using System.Net;
using System.Threading.Tasks;
using NetServer.Tests.Http;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Diagnostics;

/// <summary>The HTTP server's http.server.* metrics and its Server activity, over real loopback sockets.</summary>
public sealed class HttpTelemetryTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(10);

    /// <summary>Answers 503 to /fail, 200 to anything else.</summary>
    internal sealed class StatusServer() : HttpServer(new IPEndPoint(IPAddress.Loopback, 0))
    {
        public int BoundPort => ((IPEndPoint)Endpoint).Port;

        public ConcurrentQueue<string?> CurrentTraceIds { get; } = new();

        protected override TcpSession CreateSession() => new Session(this);

        private sealed class Session(StatusServer server) : HttpSession(server)
        {
            protected override void OnReceivedRequest(HttpRequest request)
            {
                server.CurrentTraceIds.Enqueue(Activity.Current?.TraceId.ToHexString());
                SendResponseAsync(request.Url == "/fail" ? Response.MakeErrorResponse(503, "down") : Response.MakeGetResponse("ok"));
            }
        }
    }

    /// <summary>Keeps the stopped activities of the "NetServer" source (process-wide: tests filter by port).</summary>
    internal sealed class ActivityRecorder : IDisposable
    {
        private readonly ActivityListener _listener = new()
        {
            ShouldListenTo = source => source.Name == "NetServer",
            Sample = (ref ActivityCreationOptions<ActivityContext> _) => ActivitySamplingResult.AllDataAndRecorded,
        };

        public ActivityRecorder()
        {
            _listener.ActivityStopped = Stopped.Enqueue;
            ActivitySource.AddActivityListener(_listener);
        }

        public ConcurrentQueue<Activity> Stopped { get; } = new();

        public Activity[] For(int port) => Stopped.Where(a => Equals(a.GetTagItem("server.port"), port)).ToArray();

        public void Dispose() => _listener.Dispose();
    }

    [Fact]
    public async Task Requests_are_measured_with_method_status_and_error_type()
    {
        using var metrics = new MetricRecorder();
        using var server = new StatusServer();
        Assert.True(server.Start());
        var port = server.BoundPort;

        using (var connection = await RawHttpConnection.ConnectAsync(port))
        {
            await connection.SendAsync("GET /ok HTTP/1.1\r\nHost: x\r\n\r\n");
            Assert.Equal(200, (await connection.ReadResponseAsync(timeout: Timeout)).Status);
            await connection.SendAsync("POST /fail HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
            Assert.Equal(503, (await connection.ReadResponseAsync(timeout: Timeout)).Status);
        }

        // Recorded once the answer is queued, which may be just after the client read it.
        await Wait.UntilAsync(() => metrics.For("http.server.request.duration", port).Count() >= 2, "two request durations", Timeout);
        var durations = metrics.For("http.server.request.duration", port).ToArray();
        Assert.Equal(2, durations.Length);
        var ok = Assert.Single(durations, d => Equals(d.Tags["http.request.method"], "GET"));
        Assert.Equal(200, ok.Tags["http.response.status_code"]);
        Assert.Equal("http", ok.Tags["url.scheme"]);
        Assert.Equal("1.1", ok.Tags["network.protocol.version"]);
        Assert.False(ok.Tags.ContainsKey("error.type"));
        Assert.True(ok.Value >= 0);
        var failed = Assert.Single(durations, d => Equals(d.Tags["http.request.method"], "POST"));
        Assert.Equal(503, failed.Tags["http.response.status_code"]);
        Assert.Equal("503", failed.Tags["error.type"]);

        var active = metrics.For("http.server.active_requests", port).ToArray();
        Assert.Equal(2, active.Count(m => m.Value == 1));
        Assert.Equal(0, active.Sum(m => m.Value));
        server.Stop();
    }

    [Fact]
    public async Task The_server_activity_continues_the_trace_of_traceparent()
    {
        using var activities = new ActivityRecorder();
        using var server = new StatusServer();
        Assert.True(server.Start());
        var port = server.BoundPort;
        var traceId = ActivityTraceId.CreateRandom();
        var parentId = ActivitySpanId.CreateRandom();

        using (var connection = await RawHttpConnection.ConnectAsync(port))
        {
            await connection.SendAsync($"GET /fail HTTP/1.1\r\nHost: x\r\ntraceparent: 00-{traceId.ToHexString()}-{parentId.ToHexString()}-01\r\ntracestate: k=v\r\n\r\n");
            Assert.Equal(503, (await connection.ReadResponseAsync(timeout: Timeout)).Status);
            await connection.SendAsync("GET /ok HTTP/1.1\r\nHost: x\r\n\r\n");
            Assert.Equal(200, (await connection.ReadResponseAsync(timeout: Timeout)).Status);
        }

        await Wait.UntilAsync(() => activities.For(port).Length >= 2, "two server activities", Timeout);
        var stopped = activities.For(port);
        Assert.Equal(2, stopped.Length);
        var continued = stopped[0];
        Assert.Equal(ActivityKind.Server, continued.Kind);
        Assert.Equal("GET", continued.DisplayName);
        Assert.Equal(traceId, continued.TraceId);
        Assert.Equal(parentId, continued.ParentSpanId);
        Assert.Equal("k=v", continued.TraceStateString);
        Assert.Equal(ActivityStatusCode.Error, continued.Status);
        Assert.Equal(503, continued.GetTagItem("http.response.status_code"));
        // The application's hook ran inside the activity.
        Assert.Equal(traceId.ToHexString(), server.CurrentTraceIds.First());

        var fresh = stopped[1];
        Assert.NotEqual(traceId, fresh.TraceId);
        Assert.Equal(default, fresh.ParentSpanId);
        Assert.Equal(ActivityStatusCode.Unset, fresh.Status);
        server.Stop();
    }
}
