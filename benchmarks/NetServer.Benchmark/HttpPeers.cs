using System;
using System.Buffers.Text;
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Threading;

namespace NetServer.Benchmark;

/// <summary>
/// What the http and https servers answer, the same as benchmarks/KestrelReference: GET (any
/// path) "Hello, World!" as text/plain with a Date field, HEAD its head, TRACE the request echoed
/// as message/http (MakeTraceResponse), anything else 405 with Allow. Written once for both sessions.
/// The GET answer is byte for byte Kestrel's: its fields in Kestrel's order (Content-Length
/// first, which SetBody then leaves as it is).
/// </summary>
internal static class HttpAnswer
{
    public static readonly byte[] Body = "Hello, World!"u8.ToArray();

    private static readonly string s_bodyLength = Body.Length.ToString(CultureInfo.InvariantCulture);

    public static HttpResponse Make(HttpRequest request, HttpResponse response) => request.Method switch
    {
        "GET" => Head(response).SetBody(Body),
        "HEAD" => Head(response).SetBodyLength(Body.Length),
        "TRACE" => response.MakeTraceResponse(request),
        _ => response.SetBegin(405).SetHeader("Allow", "GET, HEAD, TRACE").SetHeader("Date", HttpDateValue.Current).SetBody(),
    };

    private static HttpResponse Head(HttpResponse response) =>
        response.SetBegin(200).SetHeader("Content-Length", s_bodyLength).SetHeader("Content-Type", "text/plain").SetHeader("Date", HttpDateValue.Current);
}

/// <summary>
/// The Date field's value, formatted once a second (as Kestrel does), so a response costs no
/// allocation for it. Read racily: a reader sees the previous second's or the new string, both valid.
/// </summary>
internal static class HttpDateValue
{
    private static string s_current = Format();
    // Held here: a timer nothing references may be collected and stop.
    private static readonly Timer s_refresh = new(_ => s_current = Format(), null, TimeSpan.FromSeconds(1), TimeSpan.FromSeconds(1));

    public static string Current => Volatile.Read(ref s_current);

    private static string Format() => DateTime.UtcNow.ToString("r", CultureInfo.InvariantCulture);
}

internal sealed class BenchHttpSession(HttpServer server, ServerCounters counters) : HttpSession(server)
{
    protected override void OnReceivedRequest(HttpRequest request)
    {
        counters.AddRequest();
        SendResponseAsync(HttpAnswer.Make(request, Response));
    }

    protected override void OnReceivedRequestError(HttpRequest request, string error) => counters.AddError($"bad request: {error}");

    protected override void OnError(SocketError error) => counters.AddError(error, DisconnectException);
}

internal sealed class BenchHttpServer(IPEndPoint endpoint, ServerCounters counters) : HttpServer(endpoint)
{
    protected override TcpSession CreateSession() => new BenchHttpSession(this, counters);

    protected override void OnConnected(TcpSession session) => counters.AddEstablished();

    protected override void OnError(SocketError error) => counters.AddError(error);
}

internal sealed class BenchHttpsSession(HttpsServer server, ServerCounters counters) : HttpsSession(server)
{
    protected override void OnReceivedRequest(HttpRequest request)
    {
        counters.AddRequest();
        SendResponseAsync(HttpAnswer.Make(request, Response));
    }

    protected override void OnReceivedRequestError(HttpRequest request, string error) => counters.AddError($"bad request: {error}");

    protected override void OnError(SocketError error) => counters.AddError(error, DisconnectException);
}

internal sealed class BenchHttpsServer(SslContext context, IPEndPoint endpoint, ServerCounters counters) : HttpsServer(context, endpoint)
{
    protected override SslSession CreateSession() => new BenchHttpsSession(this, counters);

    protected override void OnHandshaked(SslSession session) => counters.AddEstablished();

    protected override void OnHandshakeFailed(SslSession session, Exception exception) => counters.AddError($"handshake failed: {ErrorText.Describe(exception)}");

    protected override void OnError(SocketError error) => counters.AddError(error);
}

/// <summary>
/// The http load client over any stream client (tcp or TLS): keeps <c>depth</c>
/// requests in flight (get, trace: 1; pipeline: MESSAGES), written at once when connected, and
/// answers every complete response with one more request (the requests for one received chunk
/// go out with one send). Responses are counted one by one; a status other than 200 is an error.
/// </summary>
internal sealed class HttpLoadBehavior : ClientBehavior
{
    private readonly byte[] _batch;
    private readonly int _requestLength;
    private readonly int _depth;
    private readonly HttpResponseReader _reader = new();

    public HttpLoadBehavior(byte[] request, int depth)
    {
        _requestLength = request.Length;
        _depth = depth;
        _batch = new byte[request.Length * depth];
        for (var i = 0; i < depth; i++)
            request.CopyTo(_batch, i * request.Length);
    }

    /// <summary>wrk's requests: GET with Host only; TRACE with "Content-Length: 0" as well (benchmarks/wrk/trace.lua).</summary>
    public static byte[] Request(string scenario, EndPoint target) => Encoding.ASCII.GetBytes(scenario == "trace"
        ? $"TRACE / HTTP/1.1\r\nHost: {target}\r\nContent-Length: 0\r\n\r\n"
        : $"GET / HTTP/1.1\r\nHost: {target}\r\n\r\n");

    public override void Connected(StreamConnection client) => client.SendAsync(_batch.AsSpan());

    public override void Received(StreamConnection client, byte[] buffer, long offset, long size)
    {
        Counters.AddReceived(size);
        var data = new ReadOnlySpan<byte>(buffer, (int)offset, (int)size);
        var (responses, failed) = _reader.Read(data);
        for (var i = 0; i < responses; i++)
            Counters.AddMessage();
        if (failed > 0)
        {
            for (var i = 0; i < failed; i++)
                Counters.AddError();
            ErrorText.Print($"client: {failed} response(s) not 200 OK, the last: {_reader.LastFailure}");
        }

        // One more request per response, at most the batch at a time (a chunk holds at most depth answers).
        for (var answered = responses + failed; answered > 0; answered -= _depth)
            client.SendAsync(_batch.AsSpan(0, Math.Min(answered, _depth) * _requestLength));
    }
}

/// <summary>
/// Splits a stream of HTTP/1.1 responses framed by Content-Length (no chunked bodies: the
/// benchmark servers send none) and checks each status. A head is gathered in a buffer of its
/// own across chunks; a body is only skipped.
/// </summary>
internal sealed class HttpResponseReader
{
    private const int MaxHead = 8192;
    private readonly byte[] _head = new byte[MaxHead];
    private int _headLength;
    private long _bodyLeft;

    /// <summary>The status line of the last response that was not 200.</summary>
    public string? LastFailure { get; private set; }

    /// <summary>Reads <paramref name="data"/>; returns the responses it completed, 200 and other.</summary>
    public (int Ok, int Failed) Read(ReadOnlySpan<byte> data)
    {
        int ok = 0, failed = 0;
        var okStatus = true;
        while (!data.IsEmpty)
        {
            if (_bodyLeft > 0)
            {
                var skip = (int)Math.Min(_bodyLeft, data.Length);
                data = data[skip..];
                _bodyLeft -= skip;
                if (_bodyLeft == 0)
                    Count(okStatus, ref ok, ref failed);
                continue;
            }

            // The head's end may straddle two chunks: look from three bytes before the new ones.
            var copied = Math.Min(data.Length, MaxHead - _headLength);
            if (copied == 0)
                throw new InvalidOperationException($"A response head longer than {MaxHead} bytes.");
            data[..copied].CopyTo(_head.AsSpan(_headLength));
            var from = Math.Max(0, _headLength - 3);
            var end = _head.AsSpan(from, _headLength + copied - from).IndexOf("\r\n\r\n"u8);
            if (end < 0)
            {
                _headLength += copied;
                data = data[copied..];
                continue;
            }

            var headEnd = from + end + 4;
            data = data[(headEnd - _headLength)..];
            _headLength = 0;
            var head = _head.AsSpan(0, headEnd);
            okStatus = head.StartsWith("HTTP/1.1 200 "u8);
            if (!okStatus)
                LastFailure = Encoding.ASCII.GetString(head[..Math.Max(0, head.IndexOf("\r\n"u8))]);
            _bodyLeft = ContentLength(head);
            if (_bodyLeft == 0)
                Count(okStatus, ref ok, ref failed);
        }

        return (ok, failed);
    }

    private static void Count(bool okStatus, ref int ok, ref int failed)
    {
        if (okStatus)
            ok++;
        else
            failed++;
    }

    /// <summary>The Content-Length field's value (0 without one), its name in any case.</summary>
    private static long ContentLength(ReadOnlySpan<byte> head)
    {
        const string Name = "content-length:";
        for (var line = head; !line.IsEmpty;)
        {
            var eol = line.IndexOf("\r\n"u8);
            var current = eol < 0 ? line : line[..eol];
            if (current.Length > Name.Length && Ascii.EqualsIgnoreCase(current[..Name.Length], Name))
                return Utf8Parser.TryParse(current[Name.Length..].Trim((byte)' '), out long length, out _) ? length
                    : throw new InvalidOperationException("A response with a Content-Length that is not a number.");
            line = eol < 0 ? default : line[(eol + 2)..];
        }

        return 0;
    }
}
