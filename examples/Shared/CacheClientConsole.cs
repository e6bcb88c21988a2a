using System;
using System.IO;
using System.Net.Sockets;
using System.Security.Authentication;
using System.Threading.Tasks;

namespace NetServer.Examples;

/// <summary>
/// The console of the HTTP and HTTPS cache clients: commands typed (or a scripted demo) become
/// requests to the cache server's <c>/api/cache</c>, sent through <c>send</c> (an HttpClientEx's
/// or HttpsClientEx's SendRequest), and each response is printed as "status reason: body".
/// </summary>
internal sealed class CacheClientConsole(HttpRequest request, Func<HttpRequest, Task<HttpResponse>> send)
{
    /// <summary>The switch that runs the demo instead of reading commands.</summary>
    public const string DemoSwitch = "--demo";

    private const string CachePath = "/api/cache";

    /// <summary>Reads commands until an empty line (or the end of input); returns the exit code.</summary>
    public async Task<int> RunAsync()
    {
        Console.WriteLine("Commands: list, get KEY, put KEY VALUE, delete KEY; an empty line quits.");
        while (Console.ReadLine() is { Length: > 0 } line)
        {
            var words = line.Split(' ', 3, StringSplitOptions.RemoveEmptyEntries);
            var sent = words switch
            {
                ["list"] => request.MakeGetRequest(CachePath),
                ["get", var key] => request.MakeGetRequest(UrlOf(key)),
                ["put", var key, var value] => request.MakePutRequest(UrlOf(key), value),
                ["delete", var key] => request.MakeDeleteRequest(UrlOf(key)),
                _ => null,
            };
            if (sent is null)
                Console.WriteLine("Unknown command. Commands: list, get KEY, put KEY VALUE, delete KEY.");
            else
                await SendAsync(sent);
        }

        return 0;
    }

    /// <summary>
    /// Stores, reads, lists and deletes one key, checking every answer against the API: prints
    /// "Demo passed" and gives 0, or says which step failed and gives 1.
    /// </summary>
    public async Task<int> RunDemoAsync()
    {
        const string Key = "greeting";
        const string Value = "Hello, World!";
        var passed =
            await ExpectAsync(request.MakePutRequest(UrlOf(Key), Value), 200, string.Empty)
            && await ExpectAsync(request.MakeGetRequest(UrlOf(Key)), 200, Value)
            && await ExpectAsync(request.MakeGetRequest(CachePath), 200, $$"""[{"key":"{{Key}}","value":"{{Value}}"}]""")
            && await ExpectAsync(request.MakeDeleteRequest(UrlOf(Key)), 200, Value)
            && await ExpectAsync(request.MakeGetRequest(UrlOf(Key)), 404, $"No cache value for the key: {Key}");
        Console.WriteLine(passed ? "Demo passed" : "Demo failed");
        return passed ? 0 : 1;
    }

    private static string UrlOf(string key) => $"{CachePath}?key={Uri.EscapeDataString(key)}";

    private async Task<bool> ExpectAsync(HttpRequest sent, int status, string body)
    {
        var response = await SendAsync(sent);
        if (response is { } answer && answer.Status == status && answer.Body == body)
            return true;
        Console.WriteLine($"Expected {status} with \"{body}\".");
        return false;
    }

    /// <summary>Sends, prints and returns the status and body (read at once: the response object is reused); null when the request failed.</summary>
    private async Task<(int Status, string Body)?> SendAsync(HttpRequest sent)
    {
        Console.WriteLine($"{sent.Method} {sent.Url}");
        try
        {
            var response = await send(sent);
            Console.WriteLine($"{response.Status} {response.StatusPhrase}: {response.Body}");
            return (response.Status, response.Body);
        }
        catch (Exception e) when (e is IOException or SocketException or AuthenticationException or TimeoutException)
        {
            Console.WriteLine($"Request failed: {e.Message}");
            return null;
        }
    }
}
