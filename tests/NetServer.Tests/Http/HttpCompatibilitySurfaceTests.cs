using System;
using Xunit;

namespace NetServer.Tests.Http;

/// <summary>
/// NetCoreServer's HTTP message and buffer members used as its applications write them. Method
/// groups are assigned to delegates of the exact signature (parameter types, return type), and
/// values' static types are checked with <see cref="TypeOf{T}"/> (which sees an <c>int</c> where a
/// <c>long</c> assignment would compile anyway), so a changed signature fails the build or the test.
/// </summary>
public class HttpCompatibilitySurfaceTests
{
    private static Type TypeOf<T>(T value) => typeof(T);

    [Fact]
    public void HttpRequest_has_NetCoreServers_members()
    {
        var request = new HttpRequest();
        request = new HttpRequest("GET", "/");
        request = new HttpRequest("GET", "/", "HTTP/1.0");

        Func<HttpRequest> clear = request.Clear;
        Func<string, string, string, HttpRequest> setBegin = request.SetBegin;
        Func<string, string, HttpRequest> setHeader = request.SetHeader;
        Func<string, string, HttpRequest> setCookie = request.SetCookie;
        Func<string, string, HttpRequest> addCookie = request.AddCookie;
        Func<string, HttpRequest> setBodyText = request.SetBody;
        SpanCharMaker setBodyChars = request.SetBody;
        Func<byte[], HttpRequest> setBodyBytes = request.SetBody;
        SpanByteMaker setBodySpan = request.SetBody;
        Func<int, HttpRequest> setBodyLength = request.SetBodyLength;
        Func<string, HttpRequest> makeHead = request.MakeHeadRequest;
        Func<string, HttpRequest> makeGet = request.MakeGetRequest;
        Func<string, HttpRequest> makeDelete = request.MakeDeleteRequest;
        Func<string, HttpRequest> makeOptions = request.MakeOptionsRequest;
        Func<string, HttpRequest> makeTrace = request.MakeTraceRequest;
        Func<string, string, string, HttpRequest> makePost = request.MakePostRequest;
        UrlSpanCharMaker makePostChars = request.MakePostRequest;
        Func<string, byte[], string, HttpRequest> makePostBytes = request.MakePostRequest;
        UrlSpanByteMaker makePostSpan = request.MakePostRequest;
        Func<string, string, string, HttpRequest> makePut = request.MakePutRequest;
        UrlSpanCharMaker makePutChars = request.MakePutRequest;
        Func<string, byte[], string, HttpRequest> makePutBytes = request.MakePutRequest;
        UrlSpanByteMaker makePutSpan = request.MakePutRequest;
        Func<int, (string, string)> header = request.Header;
        Func<int, (string, string)> cookie = request.Cookie;
        Assert.NotNull(clear);

        // Defaults as NetCoreServer's callers rely on them.
        request.SetBegin("GET", "/x").SetHeader("Host", "h").SetCookie("a", "1").AddCookie("b", "2").SetBody();
        request.MakePostRequest("/p", "text");
        request.MakePostRequest("/p", "text".AsSpan());
        request.MakePostRequest("/p", new byte[] { 1 });
        request.MakePostRequest("/p", new byte[] { 1 }.AsSpan());
        request.MakePutRequest("/p", "text");

        request.SetBegin("GET", "/x").SetHeader("Host", "h").SetCookie("a", "1").SetBody("b");
        bool isEmpty = request.IsEmpty;
        bool isErrorSet = request.IsErrorSet;
        string method = request.Method;
        string url = request.Url;
        string protocol = request.Protocol;
        long headers = request.Headers;
        (string, string) first = request.Header(0);
        long cookies = request.Cookies;
        (string, string) firstCookie = request.Cookie(0);
        string body = request.Body;
        byte[] bodyBytes = request.BodyBytes;
        Span<byte> bodySpan = request.BodySpan;
        long bodyLength = request.BodyLength;
        Buffer cache = request.Cache;

        Assert.Equal(typeof(long), TypeOf(request.Headers));
        Assert.Equal(typeof(long), TypeOf(request.Cookies));
        Assert.Equal(typeof(long), TypeOf(request.BodyLength));
        Assert.False(isEmpty);
        Assert.False(isErrorSet);
        Assert.Equal("GET", method);
        Assert.Equal("/x", url);
        Assert.Equal("HTTP/1.1", protocol);
        Assert.Equal(3, headers);
        Assert.Equal(("Host", "h"), first);
        Assert.Equal(1, cookies);
        Assert.Equal(("a", "1"), firstCookie);
        Assert.Equal("b", body);
        Assert.Single(bodyBytes);
        Assert.Equal(1, bodySpan.Length);
        Assert.Equal(1, bodyLength);
        Assert.Equal(cache.Size, cache.Data.Length >= cache.Size ? cache.Size : -1);

        // A session's handler, as NetCoreServer's examples write it.
        if (request.Method == "GET")
            Assert.Equal("/x", request.Url);
        for (var i = 0; i < request.Headers; i++)
        {
            var (name, value) = request.Header(i);
            Assert.NotEmpty(name);
            Assert.NotNull(value);
        }
    }

    [Fact]
    public void HttpResponse_has_NetCoreServers_members()
    {
        var response = new HttpResponse();
        response = new HttpResponse(200);
        response = new HttpResponse(200, "HTTP/1.0");
        response = new HttpResponse(200, "OK", "HTTP/1.1");

        Func<HttpResponse> clear = response.Clear;
        Func<int, string, HttpResponse> setBegin = response.SetBegin;
        Func<int, string, string, HttpResponse> setBeginPhrase = response.SetBegin;
        Func<string, HttpResponse> setContentType = response.SetContentType;
        Func<string, string, HttpResponse> setHeader = response.SetHeader;
        Func<string, string, int, string, string, bool, bool, bool, HttpResponse> setCookie = response.SetCookie;
        Func<string, HttpResponse> setBodyText = response.SetBody;
        ResponseSpanCharMaker setBodyChars = response.SetBody;
        Func<byte[], HttpResponse> setBodyBytes = response.SetBody;
        ResponseSpanByteMaker setBodySpan = response.SetBody;
        Func<int, HttpResponse> setBodyLength = response.SetBodyLength;
        Func<int, HttpResponse> makeOk = response.MakeOkResponse;
        Func<string, string, HttpResponse> makeError = response.MakeErrorResponse;
        Func<int, string, string, HttpResponse> makeErrorStatus = response.MakeErrorResponse;
        Func<HttpResponse> makeHead = response.MakeHeadResponse;
        Func<string, string, HttpResponse> makeGet = response.MakeGetResponse;
        ResponseSpanCharTypedMaker makeGetChars = response.MakeGetResponse;
        Func<byte[], string, HttpResponse> makeGetBytes = response.MakeGetResponse;
        ResponseSpanByteTypedMaker makeGetSpan = response.MakeGetResponse;
        Func<string, HttpResponse> makeOptions = response.MakeOptionsResponse;
        Func<string, HttpResponse> makeTrace = response.MakeTraceResponse;
        ResponseSpanCharMaker makeTraceChars = response.MakeTraceResponse;
        Func<byte[], HttpResponse> makeTraceBytes = response.MakeTraceResponse;
        ResponseSpanByteMaker makeTraceSpan = response.MakeTraceResponse;
        Func<HttpRequest, HttpResponse> makeTraceRequest = response.MakeTraceResponse;
        Func<int, (string, string)> header = response.Header;
        Func<int, (string, string)> cookie = response.Cookie;
        Assert.NotNull(clear);

        // Defaults as NetCoreServer's callers rely on them.
        response.MakeOkResponse();
        response.MakeErrorResponse();
        response.MakeErrorResponse("e");
        response.MakeErrorResponse(404);
        response.MakeErrorResponse(404, "e");
        response.MakeGetResponse();
        response.MakeGetResponse("v");
        response.MakeGetResponse("v".AsSpan());
        response.MakeGetResponse(new byte[] { 1 });
        response.MakeGetResponse(new byte[] { 1 }.AsSpan());
        response.MakeOptionsResponse();
        response.SetBegin(200).SetContentType(".html").SetHeader("X", "y").SetCookie("n", "v").SetCookie("n", "v", 1, "/", "d", false, false, false).SetBody();

        response.MakeGetResponse("v", "text/html");
        bool isEmpty = response.IsEmpty;
        bool isErrorSet = response.IsErrorSet;
        int status = response.Status;
        string phrase = response.StatusPhrase;
        string protocol = response.Protocol;
        long headers = response.Headers;
        (string, string) first = response.Header(0);
        long cookies = response.Cookies;
        string body = response.Body;
        byte[] bodyBytes = response.BodyBytes;
        ReadOnlySpan<byte> bodySpan = response.BodySpan;
        long bodyLength = response.BodyLength;
        Buffer cache = response.Cache;

        Assert.Equal(typeof(int), TypeOf(response.Status));
        Assert.Equal(typeof(long), TypeOf(response.Headers));
        Assert.Equal(typeof(long), TypeOf(response.BodyLength));
        Assert.False(isEmpty);
        Assert.False(isErrorSet);
        Assert.Equal(200, status);
        Assert.Equal("OK", phrase);
        Assert.Equal("HTTP/1.1", protocol);
        Assert.Equal(2, headers);
        Assert.Equal(("Content-Type", "text/html"), first);
        Assert.Equal(0, cookies);
        Assert.Equal("v", body);
        Assert.Single(bodyBytes);
        Assert.Equal(1, bodySpan.Length);
        Assert.Equal(1, bodyLength);
        Assert.True(cache.Size > 0);
    }

    [Fact]
    public void Buffer_has_NetCoreServers_members()
    {
        var buffer = new Buffer();
        buffer = new Buffer(16L);
        buffer = new Buffer(new byte[] { 1, 2 });

        Func<byte, long> appendByte = buffer.Append;
        Func<byte[], long> appendBytes = buffer.Append;
        Func<byte[], long, long, long> appendRange = buffer.Append;
        BufferSpanAppender appendSpan = buffer.Append;
        Func<Buffer, long> appendBuffer = buffer.Append;
        Func<string, long> appendText = buffer.Append;
        BufferCharAppender appendChars = buffer.Append;
        BufferSpan asSpan = buffer.AsSpan;
        Action clear = buffer.Clear;
        Func<long, long, string> extract = buffer.ExtractString;
        Action<long, long> remove = buffer.Remove;
        Action<long> reserve = buffer.Reserve;
        Action<long> resize = buffer.Resize;
        Action<long> shift = buffer.Shift;
        Action<long> unshift = buffer.Unshift;
        Assert.NotNull(clear);

        bool isEmpty = buffer.IsEmpty;
        byte[] data = buffer.Data;
        long capacity = buffer.Capacity;
        long size = buffer.Size;
        long offset = buffer.Offset;
        byte second = buffer[1L];
        Assert.Equal(typeof(long), TypeOf(buffer.Size));
        Assert.Equal(typeof(long), TypeOf(buffer.Capacity));
        Assert.Equal(typeof(long), TypeOf(buffer.Offset));
        Assert.False(isEmpty);
        Assert.Equal(2, data.Length);
        Assert.Equal(2, capacity);
        Assert.Equal(2, size);
        Assert.Equal(0, offset);
        Assert.Equal(2, second);
        Assert.Equal(1, appendByte(3));
        Assert.Equal(3, asSpan().Length);
    }

    private delegate HttpRequest SpanCharMaker(ReadOnlySpan<char> body);

    private delegate HttpRequest SpanByteMaker(ReadOnlySpan<byte> body);

    private delegate HttpRequest UrlSpanCharMaker(string url, ReadOnlySpan<char> content, string contentType);

    private delegate HttpRequest UrlSpanByteMaker(string url, ReadOnlySpan<byte> content, string contentType);

    private delegate HttpResponse ResponseSpanCharMaker(ReadOnlySpan<char> content);

    private delegate HttpResponse ResponseSpanByteMaker(ReadOnlySpan<byte> content);

    private delegate HttpResponse ResponseSpanCharTypedMaker(ReadOnlySpan<char> content, string contentType);

    private delegate HttpResponse ResponseSpanByteTypedMaker(ReadOnlySpan<byte> content, string contentType);

    private delegate long BufferSpanAppender(ReadOnlySpan<byte> buffer);

    private delegate long BufferCharAppender(ReadOnlySpan<char> text);

    private delegate Span<byte> BufferSpan();
}
