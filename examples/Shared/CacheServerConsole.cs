using System.Threading.Tasks;

namespace NetServer.Examples;

/// <summary>
/// What the HTTP and HTTPS cache servers share besides <see cref="CacheApi"/>: where the API page
/// is (www/api, found by <see cref="PageFolder"/>, served at /api), and the operator's console.
/// </summary>
internal static class CacheServerConsole
{
    /// <summary>The URL prefix the page's files are served at.</summary>
    public const string PagePrefix = "/api";

    /// <summary>The folder of the page under www/.</summary>
    public const string PageFolderName = "api";

    /// <summary>Runs the server until the operator stops it, printing where the API page is once it listens.</summary>
    /// <returns>The process exit code.</returns>
    public static Task<int> RunAsync<TSession>(StreamServer<TSession> server, string title, string scheme)
        where TSession : StreamSession =>
        ServerConsole.RunAsync(title, new ServerConsole.Controls(
            PageFolder.StartShowing(server.Start, () => server.Endpoint, "API page", scheme, PagePrefix),
            server.StopAsync,
            () => server.IsStarted,
            () => server.Endpoint,
            null));
}
