using System;
using System.IO;
using System.Net;

namespace NetServer.Examples;

/// <summary>
/// The folders of www/ the HTTP and WebSocket servers serve as static content (www/api, www/ws):
/// found walking up from the program's folder, then from the current one (as certs/ is found), or
/// named with <see cref="Option"/>; and how the servers report what they serve from them.
/// </summary>
internal static class PageFolder
{
    /// <summary>The option that names the page's folder instead of letting the program look for it.</summary>
    public const string Option = "--www";

    /// <summary>
    /// The folder given with <see cref="Option"/>, or else the first www/<paramref name="name"/>
    /// holding index.html found above the program's folder, then above the current one. Prints
    /// why and gives null when there is none.
    /// </summary>
    public static string? Find(string? given, string name)
    {
        if (given is not null)
        {
            if (File.Exists(Path.Combine(given, "index.html")))
                return Path.GetFullPath(given);
            Console.WriteLine($"No index.html in {given}.");
            return null;
        }

        if ((FindAbove(AppContext.BaseDirectory, name) ?? FindAbove(Environment.CurrentDirectory, name)) is { } found)
            return found;
        Console.WriteLine($"No www/{name} folder above {AppContext.BaseDirectory} or {Environment.CurrentDirectory}; name one with {Option} DIR.");
        return null;
    }

    /// <summary>
    /// A server's <paramref name="start"/> that then prints where its page is, for example
    /// "Chat page: http://127.0.0.1:8080/chat/index.html" with the port really bound.
    /// </summary>
    public static Func<bool> StartShowing(Func<bool> start, Func<EndPoint> endpoint, string label, string scheme, string prefix) =>
        () =>
        {
            var started = start();
            Console.WriteLine($"{label}: {scheme}://{endpoint()}{prefix}/index.html");
            return started;
        };

    /// <summary>Prints one line per request answered from the static content.</summary>
    public static void LogStatic(HttpRequest request) => Console.WriteLine($"{request.Method} {request.Url} -> static");

    private static string? FindAbove(string start, string name)
    {
        for (var folder = new DirectoryInfo(start); folder is not null; folder = folder.Parent)
        {
            var candidate = Path.Combine(folder.FullName, "www", name);
            if (File.Exists(Path.Combine(candidate, "index.html")))
                return candidate;
        }

        return null;
    }
}
