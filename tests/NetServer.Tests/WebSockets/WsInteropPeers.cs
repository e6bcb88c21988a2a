using System;
using System.Collections.Generic;
using System.ComponentModel;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.Text.Json;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.WebSockets;

/// <summary>
/// Finds and runs the peers: tests/node/ws-interop-{client,server}.js and
/// tests/python/ws_interop_{client,server}.py, each a child process killed when the test ends, and
/// the test CA and server certificate as PEM files for their TLS.
/// </summary>
internal static class WsInteropPeers
{
    private static readonly TimeSpan s_probeTimeout = TimeSpan.FromSeconds(10);
    private static readonly Lazy<string?> s_nodeFailure = new(ProbeNode);
    private static readonly Lazy<(string? Python, string? Failure)> s_python = new(ProbePython);

    /// <summary>How long a peer may take for everything it is asked to do.</summary>
    public static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);

    /// <summary>The repository root (where NetServer.sln is).</summary>
    public static string Repository { get; } = FindRepository();

    /// <summary>Why Node's <c>ws</c> cannot be run here, or null when it can.</summary>
    public static string? NodeFailure => s_nodeFailure.Value;

    /// <summary>Why no python3 with <c>websockets</c> can be run here, or null when one can.</summary>
    public static string? PythonFailure => s_python.Value.Failure;

    /// <summary>Runs a peer's client script against <paramref name="url"/>; returns its "result" lines, by scenario, once it exited with 0.</summary>
    public static async Task<Dictionary<string, JsonElement>> RunClientAsync(WsPeer peer, string url, WsDeflateMode deflate, CertificateFiles? certificates)
    {
        var arguments = new List<string> { url };
        if (deflate == WsDeflateMode.Off)
            arguments.Add("--no-deflate");
        if (deflate == WsDeflateMode.NoContextTakeover)
            arguments.Add("--no-context-takeover");
        var environment = new Dictionary<string, string>();
        if (certificates is not null)
        {
            if (peer == WsPeer.Node)
                environment["NODE_EXTRA_CA_CERTS"] = certificates.Authority;
            else
                arguments.AddRange(["--ca", certificates.Authority]);
        }

        await using var client = Start(peer, "client", environment, arguments);
        var exit = await client.WaitForExitAsync();
        Assert.True(exit == 0, $"The {peer} client exited with {exit}:{Environment.NewLine}{client.Transcript}");
        var results = new Dictionary<string, JsonElement>();
        foreach (var line in client.Transcript.Split(Environment.NewLine))
        {
            if (!line.StartsWith("result ", StringComparison.Ordinal))
                continue;
            var result = JsonDocument.Parse(line["result ".Length..]).RootElement;
            results[result.GetProperty("scenario").GetString()!] = result;
        }

        return results;
    }

    /// <summary>Starts a peer's server script (TLS with <paramref name="certificates"/> when given); returns it and the port it listens on (127.0.0.1).</summary>
    public static async Task<(ProgramProcess Server, int Port)> StartServerAsync(WsPeer peer, bool deflate, CertificateFiles? certificates)
    {
        var arguments = new List<string>();
        if (deflate)
            arguments.Add("--deflate");
        if (certificates is not null)
            arguments.AddRange(["--tls", certificates.Server, certificates.ServerKey]);
        var server = Start(peer, "server", new Dictionary<string, string>(), arguments);
        try
        {
            var line = await server.WaitForLineAsync("listening ");
            return (server, int.Parse(line["listening ".Length..], NumberStyles.None, CultureInfo.InvariantCulture));
        }
        catch
        {
            await server.DisposeAsync();
            throw;
        }
    }

    private static ProgramProcess Start(WsPeer peer, string role, Dictionary<string, string> environment, List<string> arguments) =>
        peer == WsPeer.Node
            ? ProgramProcess.StartTool("node", Timeout, environment, [Path.Combine(Repository, "tests", "node", $"ws-interop-{role}.js"), .. arguments])
            : ProgramProcess.StartTool(s_python.Value.Python!, Timeout, environment, [Path.Combine(Repository, "tests", "python", $"ws_interop_{role}.py"), .. arguments]);

    private static string? ProbeNode()
    {
        var ws = Path.Combine(Repository, "tests", "node", "node_modules", "ws", "package.json");
        if (!File.Exists(ws))
            return $"Node's ws package is not installed ({ws} is missing): run build/install-tools.sh.";
        return Probe("node", ["--version"]);
    }

    // Debian's /usr/bin/python3 first: python3-websockets is installed for it, while the python3 on
    // PATH may be another interpreter (pyenv's) without the package.
    private static (string?, string?) ProbePython()
    {
        var failures = new List<string>();
        foreach (var python in new[] { "/usr/bin/python3", "python3" })
        {
            if (Probe(python, ["-c", "import websockets"]) is { } failure)
                failures.Add(failure);
            else
                return (python, null);
        }

        return (null, string.Join(" ", failures) + " Install python3-websockets (build/install-tools.sh).");
    }

    /// <summary>Null when the program ran and exited with 0, else why not.</summary>
    private static string? Probe(string fileName, string[] arguments)
    {
        try
        {
            using var process = Process.Start(new ProcessStartInfo(fileName, arguments) { UseShellExecute = false, RedirectStandardError = true, RedirectStandardOutput = true })!;

            // Runs while xunit discovers tests (an attribute's constructor): a bounded blocking wait is all it can do.
            if (!process.WaitForExit(s_probeTimeout))
            {
                process.Kill();
                return $"{fileName} {string.Join(' ', arguments)} did not finish within {s_probeTimeout.TotalSeconds} s.";
            }

            return process.ExitCode == 0 ? null : $"{fileName} {string.Join(' ', arguments)} exited with {process.ExitCode}.";
        }
        catch (Win32Exception e)
        {
            return $"{fileName} cannot be started: {e.Message}.";
        }
    }

    private static string FindRepository()
    {
        for (var folder = new DirectoryInfo(AppContext.BaseDirectory); folder is not null; folder = folder.Parent)
        {
            if (File.Exists(Path.Combine(folder.FullName, "NetServer.sln")))
                return folder.FullName;
        }

        throw new InvalidOperationException("NetServer.sln not found above " + AppContext.BaseDirectory);
    }

    /// <summary>The test CA (<see cref="TestCertificates.Authority"/>) and server certificate with its key, as PEM files in a temp folder of their own, deleted on dispose.</summary>
    public sealed class CertificateFiles : IDisposable
    {
        private readonly string _folder = Path.Combine(Path.GetTempPath(), "netserver-wsinterop-" + Guid.NewGuid().ToString("N")[..12]);

        public CertificateFiles()
        {
            Directory.CreateDirectory(_folder);
            TestCertificates.ExportPem(TestCertificates.Authority, Authority);
            TestCertificates.ExportPem(TestCertificates.Server, Server, ServerKey);
        }

        public string Authority => Path.Combine(_folder, "ca.pem");

        public string Server => Path.Combine(_folder, "server.pem");

        public string ServerKey => Path.Combine(_folder, "server.key");

        public void Dispose() => Directory.Delete(_folder, recursive: true);
    }
}
