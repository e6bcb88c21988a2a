using System;
using System.IO;
using System.Threading.Tasks;

namespace NetServer.Examples;

/// <summary>
/// What the HTTP and HTTPS cache servers share besides <see cref="CacheApi"/>: finding the API page
/// (www/api, served at /api), the log of static requests, and the operator's console.
/// </summary>
internal static class CacheServerConsole
{
    /// <summary>The option that names the page's folder instead of letting the program look for it.</summary>
    public const string WwwOption = "--www";

    /// <summary>The URL prefix the page's files are served at.</summary>
    public const string PagePrefix = "/api";

    /// <summary>
    /// The folder given with <see cref="WwwOption"/>, or else the first www/api holding index.html
    /// found walking up from the program's folder, then from the current one (as certs/ is found).
    /// Prints why and gives null when there is none.
    /// </summary>
    public static string? FindPage(string? given)
    {
        if (given is not null)
        {
            if (File.Exists(Path.Combine(given, "index.html")))
                return Path.GetFullPath(given);
            Console.WriteLine($"No index.html in {given}.");
            return null;
        }

        if ((FindAbove(AppContext.BaseDirectory) ?? FindAbove(Environment.CurrentDirectory)) is { } found)
            return found;
        Console.WriteLine($"No www/api folder above {AppContext.BaseDirectory} or {Environment.CurrentDirectory}; name one with {WwwOption} DIR.");
        return null;
    }

    /// <summary>Prints one line per request answered from the static content.</summary>
    public static void LogStatic(HttpRequest request) => Console.WriteLine($"{request.Method} {request.Url} -> static");

    /// <summary>Runs the server until the operator stops it, printing where the API page is once it listens.</summary>
    /// <returns>The process exit code.</returns>
    public static Task<int> RunAsync<TSession>(StreamServer<TSession> server, string title, string scheme)
        where TSession : StreamSession =>
        ServerConsole.RunAsync(title, new ServerConsole.Controls(
            () =>
            {
                var started = server.Start();
                Console.WriteLine($"API page: {scheme}://{server.Endpoint}{PagePrefix}/index.html");
                return started;
            },
            server.StopAsync,
            () => server.IsStarted,
            () => server.Endpoint,
            null));

    private static string? FindAbove(string start)
    {
        for (var folder = new DirectoryInfo(start); folder is not null; folder = folder.Parent)
        {
            var candidate = Path.Combine(folder.FullName, "www", "api");
            if (File.Exists(Path.Combine(candidate, "index.html")))
                return candidate;
        }

        return null;
    }
}
