using System;
using NetServer.Http;
using Xunit;

namespace NetServer.Tests.Http;

public class HttpUrlTests
{
    private static (bool Ok, string Path) Path(string url)
    {
        var ok = new HttpRequest("GET", url).TryGetPath(out var path);
        return (ok, path);
    }

    [Theory]
    [InlineData("/", "/")]
    [InlineData("/plain/path.html", "/plain/path.html")]
    [InlineData("/a%20b/c%2Fd", "/a b/c/d")]
    [InlineData("/a+b", "/a+b")] // '+' is a space only in the query
    [InlineData("/%41%62%63", "/Abc")]
    [InlineData("/caf%C3%A9", "/café")]
    [InlineData("/%E2%82%AC%F0%9F%98%80", "/€😀")]
    [InlineData("/caf\u00e9", "/café")] // sent raw as UTF-8
    [InlineData("/a/../b", "/a/../b")] // not normalized
    [InlineData("/%2e%2e/x", "/../x")]
    [InlineData("/p?x=%zz", "/p")] // the query is not the path's concern
    [InlineData("/p#frag", "/p")]
    [InlineData("http://example.com:8080/abs/p?q=1", "/abs/p")]
    [InlineData("http://example.com", "/")]
    [InlineData("http://example.com?q=1", "/")]
    [InlineData("*", "*")]
    [InlineData("example.com:443", "example.com:443")]
    public void TryGetPath_decodes_the_path(string url, string expected)
    {
        var (ok, path) = Path(url);
        Assert.True(ok);
        Assert.Equal(expected, path);
    }

    [Theory]
    [InlineData("/%zz")] // not hex
    [InlineData("/%g0")]
    [InlineData("/a%2")] // truncated
    [InlineData("/a%")]
    [InlineData("/%00")] // an encoded NUL
    [InlineData("/%C3")] // a lone lead byte
    [InlineData("/%C3%28")] // a lead byte without its continuation
    [InlineData("/%80")] // a continuation byte alone
    [InlineData("/%C0%AE")] // an overlong '.'
    [InlineData("/%E0%80%AF")] // an overlong '/'
    [InlineData("/%ED%A0%80")] // a UTF-16 surrogate
    [InlineData("/%F4%90%80%80")] // beyond U+10FFFF
    [InlineData("/%FF")]
    public void TryGetPath_fails_on_an_invalid_encoding_instead_of_guessing(string url)
    {
        var (ok, path) = Path(url);
        Assert.False(ok);
        Assert.Equal(string.Empty, path);
    }

    [Fact]
    public void A_long_path_decodes_as_a_short_one()
    {
        var segment = new string('x', 300);
        var (ok, path) = Path("/" + segment + "%2F" + segment);
        Assert.True(ok);
        Assert.Equal("/" + segment + "/" + segment, path);
        Assert.False(Path("/" + segment + "%zz").Ok);
    }

    [Fact]
    public void An_empty_request_has_no_path()
    {
        Assert.False(new HttpRequest().TryGetPath(out var path));
        Assert.Equal(string.Empty, path);
    }

    [Fact]
    public void The_decoded_path_is_reused_when_the_next_request_repeats_it()
    {
        var (bytes, head) = TestHeads.Request("GET /a%20b HTTP/1.1\r\n\r\n");
        var request = new HttpRequest();
        request.LoadHead(bytes, head);
        Assert.True(request.TryGetPath(out var first));
        request.LoadHead(bytes, head);
        Assert.True(request.TryGetPath(out var second));
        Assert.Same(first, second);
        Assert.Equal("/a b", second);
    }

    [Theory]
    [InlineData("/s?q=hello", "q", true, "hello")]
    [InlineData("/s?a=1&q=a+b%20c&q=second", "q", true, "a b c")] // the first one
    [InlineData("/s?flag&q=1", "flag", true, "")]
    [InlineData("/s?flag=&q=1", "flag", true, "")]
    [InlineData("/s?a%20b=1", "a b", true, "1")] // the name is decoded too
    [InlineData("/s?a+b=1", "a b", true, "1")]
    [InlineData("/s?n=caf%C3%A9", "n", true, "café")]
    [InlineData("/s?n=%E2%82%AC", "n", true, "€")]
    [InlineData("/s?q=1", "Q", false, "")] // names are case-sensitive
    [InlineData("/s?q=1", "missing", false, "")]
    [InlineData("/s", "q", false, "")]
    [InlineData("/s?", "q", false, "")]
    [InlineData("/s?q=%zz", "q", false, "")] // invalid: false, not garbage
    [InlineData("/s?q=%00", "q", false, "")]
    [InlineData("/s?q=%C3", "q", false, "")]
    [InlineData("/s?bad%zz=1&q=2", "q", true, "2")] // an undecodable name cannot be the one asked for
    [InlineData("/s?x=1#q=2", "q", false, "")]
    [InlineData("http://h/s?q=abs", "q", true, "abs")]
    [InlineData("/s?emoji=%F0%9F%98%80", "emoji", true, "😀")]
    public void TryGetQuery_finds_and_decodes_a_parameter(string url, string name, bool found, string expected)
    {
        var request = new HttpRequest("GET", url);
        Assert.Equal(found, request.TryGetQuery(name, out var value));
        Assert.Equal(expected, value);
    }

    [Fact]
    public void TryGetQuery_handles_long_queries_and_names()
    {
        var name = new string('n', 200);
        var value = new string('v', 400);
        var request = new HttpRequest("GET", "/s?x=1&" + name + "=" + value);
        Assert.True(request.TryGetQuery(name, out var found));
        Assert.Equal(value, found);
        Assert.Throws<ArgumentNullException>(() => request.TryGetQuery(null!, out _));
    }

    [Fact]
    public void Split_finds_the_path_and_the_query()
    {
        HttpUrl.Split("/a/b?c=d"u8, out var path, out var query);
        Assert.Equal(new HttpRange(0, 4).Start, path.Start);
        Assert.Equal(4, path.Length);
        Assert.Equal(5, query.Start);
        Assert.Equal(3, query.Length);

        HttpUrl.Split("/only"u8, out path, out query);
        Assert.Equal(5, path.Length);
        Assert.True(query.IsEmpty);
    }
}
