using System;
using System.Collections.Concurrent;
using System.Net;
using System.Threading;
using System.Threading.Tasks;

namespace NetServer.Tests.Http;

/// <summary>
/// An HTTP server for the end-to-end tests: answers "METHOD URL BODY" as text, answers /late/...
/// from another thread, streams /stream as a chunked response, and records every request and
/// every refusal its sessions saw. Tests change its <see cref="HttpServer.Limits"/> before Start
/// and hook <see cref="Header"/> to act on a request's head.
/// </summary>
internal sealed class HttpTestServer : HttpServer
{
    private int _sessionsCreated;

    public HttpTestServer()
        : base(new IPEndPoint(IPAddress.Loopback, 0))
    {
    }

    public int BoundPort => ((IPEndPoint)Endpoint).Port;

    /// <summary>Each whole request delivered to OnReceivedRequest, as "METHOD URL".</summary>
    public ConcurrentQueue<string> Requests { get; } = new();

    /// <summary>Each error given to OnReceivedRequestError.</summary>
    public ConcurrentQueue<string> Errors { get; } = new();

    /// <summary>Called from OnReceivedRequestHeader.</summary>
    public Action<HeaderContext>? Header { get; set; }

    /// <summary>Body bytes handed to OnReceivedRequestBodyPart, for the request being received.</summary>
    public long PartBytes;

    /// <summary>The largest size the request's cache reached while its body arrived in parts.</summary>
    public long LargestCacheDuringParts;

    public int SessionsCreated => Volatile.Read(ref _sessionsCreated);

    /// <summary>Completes with the next error reported (tests that wait for a timeout's refusal).</summary>
    public TaskCompletionSource<string> ErrorSignal { get; private set; } = NewSignal();

    /// <summary>Completes with the URL of the first request delivered (but /slowstream).</summary>
    public TaskCompletionSource<string> NextRequest { get; } = NewSignal();

    /// <summary>Completes when a /late/ answer's send returned, with whether its session had disconnected by then.</summary>
    public TaskCompletionSource<bool> LateAnswerSent { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

    public static TaskCompletionSource<string> NewSignal() => new(TaskCreationOptions.RunContinuationsAsynchronously);

    protected override TcpSession CreateSession()
    {
        Interlocked.Increment(ref _sessionsCreated);
        return new Session(this);
    }

    /// <summary>What the header hook may do to the request being received.</summary>
    internal readonly struct HeaderContext(Session session, HttpRequest request)
    {
        public HttpRequest Request => request;

        public long? MaxRequestBodySize
        {
            get => session.BodyLimit;
            set => session.BodyLimit = value;
        }

        public void ReceiveBodyInParts() => session.InParts();
    }

    internal sealed class Session(HttpTestServer server) : HttpSession(server)
    {
        private bool _disconnected;

        public long? BodyLimit
        {
            get => MaxRequestBodySize;
            set => MaxRequestBodySize = value;
        }

        public void InParts() => ReceiveRequestBodyInParts();

        protected override void OnReceivedRequestHeader(HttpRequest request)
        {
            Interlocked.Exchange(ref server.PartBytes, 0);
            server.Header?.Invoke(new HeaderContext(this, request));
        }

        protected override void OnReceivedRequestBodyPart(HttpRequest request, ReadOnlySpan<byte> part)
        {
            Interlocked.Add(ref server.PartBytes, part.Length);
            if (request.Cache.Size > Volatile.Read(ref server.LargestCacheDuringParts))
                Volatile.Write(ref server.LargestCacheDuringParts, request.Cache.Size);
        }

        protected override void OnReceivedRequest(HttpRequest request)
        {
            server.Requests.Enqueue(request.Method + " " + request.Url);
            if (request.Url != "/slowstream")
                server.NextRequest.TrySetResult(request.Url);
            var url = request.Url;
            if (url.StartsWith("/late/", StringComparison.Ordinal))
            {
                // Answered later, from a thread of the pool: the next pipelined request must wait for it.
                _ = Task.Run(async () =>
                {
                    await Task.Delay(20);
                    SendResponseAsync(Response.MakeGetResponse("late " + url));
                    server.LateAnswerSent.TrySetResult(Volatile.Read(ref _disconnected));
                });
                return;
            }

            if (url == "/stream")
            {
                _ = Task.Run(StreamChunks);
                return;
            }

            if (url == "/slowstream")
            {
                _ = Task.Run(SlowChunks);
                return;
            }

            if (url == "/parts")
            {
                // The body came in parts: it must not also have piled up in the request.
                SendResponseAsync(Response.MakeGetResponse($"parts {Interlocked.Read(ref server.PartBytes)} body {request.BodySpan.Length}"));
                return;
            }

            if (url == "/never")
                return; // a request nobody answers

            SendResponseAsync(Response.MakeGetResponse(request.Method + " " + url + " " + request.Body));
        }

        protected override void OnDisconnected() => Volatile.Write(ref _disconnected, true);

        protected override void OnReceivedRequestError(HttpRequest request, string error)
        {
            server.Errors.Enqueue(error);
            server.ErrorSignal.TrySetResult(error);
        }

        /// <summary>
        /// A chunked answer whose head goes out, then its body once the next request arrived (or
        /// half a second passed, when the server rightly holds that request back until the end).
        /// </summary>
        private async Task SlowChunks()
        {
            Response.SetBegin(200).SetHeader("Transfer-Encoding", "chunked").SetBodyLength(0);
            SendResponseAsync(Response);
            await Task.WhenAny(server.NextRequest.Task, Task.Delay(500));
            SendResponseBodyAsync("slow body");
            SendResponseBodyEnd();
        }

        /// <summary>A chunked answer sent part by part from another thread: StreamParts parts of StreamPartSize bytes.</summary>
        private void StreamChunks()
        {
            Response.SetBegin(200).SetHeader("Content-Type", "application/octet-stream").SetHeader("Transfer-Encoding", "chunked").SetBodyLength(0);
            SendResponseAsync(Response);
            var part = new byte[StreamPartSize];
            for (var i = 0; i < StreamParts; i++)
            {
                part.AsSpan().Fill((byte)('a' + (i % 26)));
                SendResponseBodyAsync(part);
            }

            SendResponseBodyEnd();
        }
    }

    public const int StreamParts = 200;
    public const int StreamPartSize = 1000;

    /// <summary>The body /stream sends, for comparison.</summary>
    public static string StreamBody()
    {
        var text = new System.Text.StringBuilder(StreamParts * StreamPartSize);
        for (var i = 0; i < StreamParts; i++)
            text.Append((char)('a' + (i % 26)), StreamPartSize);
        return text.ToString();
    }
}
