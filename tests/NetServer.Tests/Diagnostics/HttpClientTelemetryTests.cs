using System;
using System.Collections.Concurrent;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Diagnostics;

/// <summary>The awaited HTTP client's http.client.* metrics and its Client activity, whose trace the server continues.</summary>
public sealed class HttpClientTelemetryTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(10);

    [Fact]
    public async Task Client_requests_are_measured_with_method_status_and_error_type()
    {
        using var metrics = new MetricRecorder();
        using var server = new HttpTelemetryTests.StatusServer();
        Assert.True(server.Start());
        var port = server.BoundPort;
        using (var client = new HttpClientEx(IPAddress.Loopback, port))
        {
            Assert.Equal(200, (await client.SendGetRequest("/ok", Timeout)).Status);
            Assert.Equal(503, (await client.SendPostRequest("/fail", "x", Timeout)).Status);
        }

        var durations = metrics.For("http.client.request.duration", port).ToArray();
        Assert.Equal(2, durations.Length);
        var ok = Assert.Single(durations, d => Equals(d.Tags["http.request.method"], "GET"));
        Assert.Equal(200, ok.Tags["http.response.status_code"]);
        Assert.Equal("127.0.0.1", ok.Tags["server.address"]);
        Assert.Equal("http", ok.Tags["url.scheme"]);
        Assert.Equal("1.1", ok.Tags["network.protocol.version"]);
        Assert.False(ok.Tags.ContainsKey("error.type"));
        Assert.True(ok.Value > 0);
        var failed = Assert.Single(durations, d => Equals(d.Tags["http.request.method"], "POST"));
        Assert.Equal("503", failed.Tags["error.type"]);

        var active = metrics.For("http.client.active_requests", port).ToArray();
        Assert.Equal(2, active.Count(m => m.Value == 1));
        Assert.Equal(0, active.Sum(m => m.Value));
        server.Stop();
    }

    [Fact]
    public async Task A_request_that_gets_no_response_is_measured_with_its_exception_type()
    {
        using var metrics = new MetricRecorder();
        int closedPort;
        using (var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp))
        {
            listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            closedPort = ((IPEndPoint)listener.LocalEndPoint!).Port; // free once closed: nothing listens there
        }

        using var client = new HttpClientEx(IPAddress.Loopback, closedPort);
        await Assert.ThrowsAsync<IOException>(() => client.SendGetRequest("/", Timeout));
        var failed = Assert.Single(metrics.For("http.client.request.duration", closedPort));
        Assert.Equal(typeof(IOException).FullName, failed.Tags["error.type"]);
        Assert.False(failed.Tags.ContainsKey("http.response.status_code"));
    }

    /// <summary>Notes the activity current in its response hook, which runs on the connection's receive loop.</summary>
    private sealed class HookClient(int port) : HttpClientEx(IPAddress.Loopback, port)
    {
        public ConcurrentQueue<string> CurrentInHook { get; } = new();

        protected override void OnReceivedResponse(HttpResponse response)
        {
            CurrentInHook.Enqueue(Activity.Current?.DisplayName ?? "none");
            base.OnReceivedResponse(response);
        }
    }

    [Fact]
    public async Task The_server_continues_the_trace_of_the_client_activity()
    {
        using var activities = new HttpTelemetryTests.ActivityRecorder();
        using var server = new HttpTelemetryTests.StatusServer();
        Assert.True(server.Start());
        var port = server.BoundPort;
        using (var client = new HookClient(port))
        {
            Assert.Equal(200, (await client.SendGetRequest("/ok?token=secret", Timeout)).Status);
            // The connection's loop started inside the first request's activity but does not keep it.
            Assert.Equal(200, (await client.SendGetRequest("/ok", Timeout)).Status);
            Assert.Equal(["none", "none"], client.CurrentInHook.ToArray());
        }

        await Wait.UntilAsync(() => activities.For(port).Length >= 2, "a client and a server activity", Timeout);
        await Wait.UntilAsync(() => activities.For(port).Length >= 4, "two client and two server activities", Timeout);
        var clientActivity = activities.For(port).First(a => a.Kind == ActivityKind.Client);
        var serverActivity = activities.For(port).First(a => a.Kind == ActivityKind.Server);
        Assert.Equal("GET", clientActivity.DisplayName);
        Assert.Equal($"http://127.0.0.1:{port}/ok", clientActivity.GetTagItem("url.full")); // the query is left out
        Assert.Equal(200, clientActivity.GetTagItem("http.response.status_code"));
        Assert.Equal(clientActivity.TraceId, serverActivity.TraceId);
        Assert.Equal(clientActivity.SpanId, serverActivity.ParentSpanId);
        Assert.Equal(clientActivity.TraceId.ToHexString(), server.CurrentTraceIds.First());
        server.Stop();
    }
}
