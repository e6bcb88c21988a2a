using System.Text;
using NetServer.Http;
using Xunit;

namespace NetServer.Tests.Http;

public class RequestPathTests
{
    [Theory]
    [InlineData("/", "/")]
    [InlineData("/a", "/a")]
    [InlineData("/a/", "/a/")]
    [InlineData("/a/./b", "/a/b")]
    [InlineData("/a/../b", "/b")]
    [InlineData("/a/..", "/")]
    [InlineData("/a/.", "/a/")]
    [InlineData("/a/%2e", "/a/")]
    [InlineData("//a//b", "/a/b")]
    [InlineData("/a%20b", "/a b")]
    [InlineData("/a%2fb", "/a/b")]
    [InlineData("/a%5Cb", "/a/b")]
    [InlineData("/a\\b", "/a/b")]
    [InlineData("/a%2", "!")]
    [InlineData("/caf%C3%A9", "/café")]
    [InlineData("/%252e%252e/a", "/%2e%2e/a")]
    [InlineData("/a?x=/../..", "/a")]
    [InlineData("/a#frag", "/a")]
    [InlineData("http://h/a/b?q", "/a/b")]
    [InlineData("HTTPS://h:8443/a", "/a")]
    [InlineData("http://h", "/")]
    [InlineData("*", "-")]
    [InlineData("h:443", "-")]
    [InlineData("1http://h/a", "-")]
    [InlineData("/../a", "!")]
    [InlineData("/%2e%2e/a", "!")]
    [InlineData("/.%2E/a", "!")]
    [InlineData("/a/../..", "!")]
    [InlineData("/%00", "!")]
    [InlineData("/%zz", "!")]
    [InlineData("/C:/x", "!")]
    [InlineData("/x/../c:", "!")]
    [InlineData("/x/C:", "/x/C:")] // only a first segment reads as a drive
    public void Targets_normalize_to_keys(string target, string expected)
    {
        var bytes = Encoding.UTF8.GetBytes(target);
        var destination = new byte[bytes.Length + 1];
        var result = RequestPath.Normalize(bytes, destination, out var length, out _, out _, out _);

        var actual = result switch
        {
            RequestPathResult.Path => Encoding.UTF8.GetString(destination, 0, length),
            RequestPathResult.NotPath => "-",
            _ => "!",
        };
        Assert.Equal(expected, actual);
    }

    [Fact]
    public void The_raw_path_and_query_are_located_in_the_target()
    {
        var target = Encoding.ASCII.GetBytes("http://h/docs%20x?a=1#f");
        RequestPath.Normalize(target, new byte[target.Length + 1], out _, out var pathStart, out var pathEnd, out var queryEnd);

        Assert.Equal("/docs%20x", Encoding.ASCII.GetString(target, pathStart, pathEnd - pathStart));
        Assert.Equal("?a=1", Encoding.ASCII.GetString(target, pathEnd, queryEnd - pathEnd));
    }

    [Theory]
    [InlineData("Sun, 06 Nov 1994 08:49:37 GMT")]
    [InlineData("Sunday, 06-Nov-94 08:49:37 GMT")]
    [InlineData("Sun Nov  6 08:49:37 1994")]
    [InlineData("  Sun, 06 Nov 1994 08:49:37 GMT\t")]
    public void Http_dates_are_read_in_all_three_forms(string text)
    {
        Assert.True(HttpDate.TryParse(Encoding.ASCII.GetBytes(text), out var seconds));
        Assert.Equal(784111777, seconds);
    }

    [Theory]
    [InlineData("Sun, 06 Nov 1994 08:49:37 UTC")]
    [InlineData("sun, 06 Nov 1994 08:49:37 GMT")]
    [InlineData("Sun, 31 Feb 1994 08:49:37 GMT")]
    [InlineData("Sun, 06 Nov 1994 24:00:00 GMT")]
    [InlineData("Sun, 6 Nov 1994 08:49:37 GMT")]
    [InlineData("Funday, 06-Nov-94 08:49:37 GMT")]
    [InlineData("1994-11-06T08:49:37Z")]
    [InlineData("")]
    public void Other_dates_are_not(string text) => Assert.False(HttpDate.TryParse(Encoding.ASCII.GetBytes(text), out _));

    [Fact]
    public void Http_dates_are_written_as_IMF_fixdate()
    {
        var buffer = new byte[HttpDate.Length];
        Assert.True(HttpDate.TryFormat(784111777, buffer, out var written));
        Assert.Equal("Sun, 06 Nov 1994 08:49:37 GMT", Encoding.ASCII.GetString(buffer, 0, written));
        Assert.False(HttpDate.TryFormat(0, new byte[HttpDate.Length - 1], out _));
    }

    [Theory]
    [InlineData("*.html", "a.html", true)]
    [InlineData("*.html", "a.htm", false)]
    [InlineData("a?c.*", "abc.txt", true)]
    [InlineData("*a*b*", "xxaxxbxx", true)]
    [InlineData("*a*b", "xxaxxbxxc", false)]
    [InlineData("*.*", "README", true)]
    [InlineData("", "anything", true)]
    public void File_patterns_match_like_directory_listings(string pattern, string name, bool matches) =>
        Assert.Equal(matches, new FilePattern(pattern).IsMatch(name));
}
