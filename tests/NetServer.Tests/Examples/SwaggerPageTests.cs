using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Net;
using System.Text.RegularExpressions;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Examples;

/// <summary>
/// www/api, the HTTP example's API page, as a browser shows it: headless Chromium loads
/// index.html over HTTP, Swagger UI fetches openapi.yaml and renders it, and the rendered page
/// must list every cache operation the document describes. Served by the HttpServer example (a
/// child process on a free port), which finds www/api itself as a user's run does.
/// </summary>
[Collection(nameof(HostNetworkCollection))]
public sealed class SwaggerPageTests
{
    private static readonly string[] s_cacheMethods = ["get", "head", "post", "put", "delete", "options", "trace"];

    [ChromiumFact]
    public async Task Api_page_renders_every_cache_operation_of_openapi_yaml()
    {
        var www = FindWww();
        var documented = DocumentedOperations(Path.Combine(www, "api", "openapi.yaml"));
        Assert.Equal(s_cacheMethods.Order(), documented.Where(o => o.Path == "/api/cache").Select(o => o.Method).Order());

        await using var server = ProgramProcess.Start("HttpServer", "0", IPAddress.Loopback.ToString());
        var port = await server.ListeningPortAsync();
        var dom = await HeadlessBrowser.DumpDomAsync(new Uri($"http://127.0.0.1:{port}/api/index.html"), TimeSpan.FromSeconds(10), TimeSpan.FromSeconds(60));

        // Each operation Swagger UI rendered: its method, path and summary, in the markup Swagger UI 5 gives them.
        var rendered = Regex.Matches(
                dom,
                """<span class="opblock-summary-method">(\w+)</span>.*?data-path="([^"]+)".*?<div class="opblock-summary-description">([^<]*)</div>""",
                RegexOptions.Singleline)
            .Select(m => new Operation(m.Groups[1].Value.ToLowerInvariant(), m.Groups[2].Value, WebUtility.HtmlDecode(m.Groups[3].Value)))
            .ToList();
        Assert.True(rendered.Count > 0, $"Swagger UI rendered no operation. Server:{Environment.NewLine}{server.Transcript}{Environment.NewLine}Page:{Environment.NewLine}{dom}");
        Assert.Equal(documented.Order(), rendered.Order());
        Assert.Contains("NetServer HTTP cache example", dom, StringComparison.Ordinal);

        // The page took Swagger UI and the document from this server's static content (nothing from
        // elsewhere: it renders offline); the server logs each static answer.
        await server.WaitForLinesAsync(
            "GET /api/index.html -> static",
            "GET /api/swagger-ui-bundle.js -> static",
            "GET /api/swagger-ui.css -> static",
            "GET /api/openapi.yaml -> static");
    }

    private sealed record Operation(string Method, string Path, string Summary) : IComparable<Operation>
    {
        public int CompareTo(Operation? other) =>
            string.CompareOrdinal($"{Path} {Method} {Summary}", other is null ? null : $"{other.Path} {other.Method} {other.Summary}");
    }

    /// <summary>
    /// The operations in an OpenAPI document's paths (method, path, summary), read from its YAML
    /// layout: paths at two spaces, methods at four, summaries at six, one line each.
    /// </summary>
    private static List<Operation> DocumentedOperations(string file)
    {
        var operations = new List<Operation>();
        string? path = null;
        string? method = null;
        var inPaths = false;
        foreach (var line in File.ReadLines(file))
        {
            if (!line.StartsWith(' '))
                inPaths = line == "paths:";
            else if (!inPaths)
                continue;
            else if (Regex.Match(line, "^  (/[^:]*):$") is { Success: true } pathLine)
                (path, method) = (pathLine.Groups[1].Value, null);
            else if (Regex.Match(line, "^    (get|head|post|put|delete|options|trace|patch):$") is { Success: true } methodLine)
                method = methodLine.Groups[1].Value;
            else if (Regex.Match(line, "^      summary: (.*)$") is { Success: true } summaryLine && path is not null && method is not null)
                operations.Add(new Operation(method, path, summaryLine.Groups[1].Value));
        }

        return operations;
    }

    private static string FindWww()
    {
        for (var folder = new DirectoryInfo(AppContext.BaseDirectory); folder is not null; folder = folder.Parent)
        {
            var www = Path.Combine(folder.FullName, "www");
            if (File.Exists(Path.Combine(www, "api", "index.html")))
                return www;
        }

        Assert.Fail($"No www/api/index.html above {AppContext.BaseDirectory}.");
        return string.Empty;
    }
}
