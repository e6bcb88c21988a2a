using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Net;
using System.Text;
using System.Threading;
using System.Threading.Channels;
using System.Threading.Tasks;
using Xunit;

namespace NetServer.Tests.Infrastructure;

/// <summary>A program built next to the tests (an example, the benchmark CLI) run as a child process and driven through its console.</summary>
internal sealed class ProgramProcess : IAsyncDisposable
{
    private readonly Process _process;
    private readonly Channel<string> _lines = Channel.CreateUnbounded<string>();
    private readonly ConcurrentQueue<string> _transcript = new();
    private readonly TimeSpan _timeout;
    private int _disposed;

    private ProgramProcess(Process process, TimeSpan timeout)
    {
        _process = process;
        _timeout = timeout;
        _process.OutputDataReceived += (_, e) => OnOutput(e.Data, "");
        _process.ErrorDataReceived += (_, e) => OnOutput(e.Data, "stderr: ");
        _process.BeginOutputReadLine();
        _process.BeginErrorReadLine();
    }

    /// <summary>Runs <c>dotnet &lt;name&gt;.dll args</c>; the dll is built next to the tests by the project references.</summary>
    public static ProgramProcess Start(string name, params string[] args) => Start(name, TimeSpan.FromSeconds(10), args);

    /// <summary>As <see cref="Start(string, string[])"/>, with <paramref name="timeout"/> as the bound of every wait.</summary>
    public static ProgramProcess Start(string name, TimeSpan timeout, params string[] args) => Start(name, timeout, new Dictionary<string, string>(), args);

    /// <summary>As <see cref="Start(string, string[])"/>, with <paramref name="environment"/> added to the program's environment.</summary>
    public static ProgramProcess Start(string name, IReadOnlyDictionary<string, string> environment, params string[] args) => Start(name, TimeSpan.FromSeconds(10), environment, args);

    private static ProgramProcess Start(string name, TimeSpan timeout, IReadOnlyDictionary<string, string> environment, string[] args) =>
        StartTool(DotnetHost, timeout, environment, [ProgramDll(name), .. args]);

    /// <summary>
    /// As <see cref="Start(string, TimeSpan, string[])"/>, through <paramref name="launcher"/>: runs
    /// <c>launcher... dotnet &lt;name&gt;.dll args</c> (with <c>ip netns exec NAME</c>, inside a network namespace).
    /// </summary>
    public static ProgramProcess StartThrough(string[] launcher, string name, TimeSpan timeout, params string[] args) =>
        StartTool(launcher[0], timeout, new Dictionary<string, string>(), [.. launcher[1..], DotnetHost, ProgramDll(name), .. args]);

    private static string ProgramDll(string name)
    {
        // An example run from its own output folder, where its build put every assembly it needs:
        // next to the tests, a package the shared ASP.NET Core framework also holds (the tests
        // reference that framework, the example does not) is not copied, and the example fails to load it.
        var output = new DirectoryInfo(AppContext.BaseDirectory.TrimEnd(Path.DirectorySeparatorChar));
        var own = output.Parent?.Parent?.Parent?.Parent?.Parent is { } root
            ? Path.Combine(root.FullName, "examples", name, "bin", output.Parent!.Name, output.Name, name + ".dll")
            : null;
        if (own is not null && File.Exists(own))
            return own;
        var dll = Path.Combine(AppContext.BaseDirectory, name + ".dll");
        Assert.True(File.Exists(dll), $"The program is not built next to the tests: {dll}");
        return dll;
    }

    /// <summary>Runs a program that is not ours (node, python3...), <paramref name="fileName"/> found on PATH or given whole, with <paramref name="environment"/> added.</summary>
    public static ProgramProcess StartTool(string fileName, TimeSpan timeout, IReadOnlyDictionary<string, string> environment, params string[] args)
    {
        var info = new ProcessStartInfo(fileName)
        {
            UseShellExecute = false,
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            StandardInputEncoding = new UTF8Encoding(encoderShouldEmitUTF8Identifier: false),
            StandardOutputEncoding = Encoding.UTF8,
        };
        foreach (var arg in args)
            info.ArgumentList.Add(arg);
        foreach (var (variable, value) in environment)
            info.Environment[variable] = value;
        return new ProgramProcess(Process.Start(info) ?? throw new InvalidOperationException($"{fileName} did not start"), timeout);
    }

    /// <summary>The host running the tests, so the child uses the same runtime.</summary>
    private static string DotnetHost =>
        Environment.GetEnvironmentVariable("DOTNET_HOST_PATH") is { Length: > 0 } host && File.Exists(host) ? host
        : Path.GetFileNameWithoutExtension(Environment.ProcessPath) == "dotnet" ? Environment.ProcessPath!
        : "dotnet";

    public string Transcript => string.Join(Environment.NewLine, _transcript);

    /// <summary>The program's process id (for figures read from /proc, such as its CPU time).</summary>
    public int ProcessId => _process.Id;

    /// <summary>Types a line at the program's console.</summary>
    public async Task TypeAsync(string line)
    {
        await _process.StandardInput.WriteLineAsync(line).WaitAsync(_timeout);
        await _process.StandardInput.FlushAsync().WaitAsync(_timeout);
    }

    /// <summary>The port of the program's "Listening on ADDRESS:PORT" line (examples started on port 0 print it).</summary>
    public async Task<int> ListeningPortAsync()
    {
        var listening = await WaitForLineAsync("Listening on ").ConfigureAwait(false);
        return IPEndPoint.Parse(listening["Listening on ".Length..].Split(' ')[0]).Port;
    }

    /// <summary>The repository's certs/ folder (the examples' server.pfx, ca.pem), found above the test binaries.</summary>
    public static string RepositoryCertificates()
    {
        for (var folder = new DirectoryInfo(AppContext.BaseDirectory); folder is not null; folder = folder.Parent)
        {
            var certs = Path.Combine(folder.FullName, "certs");
            if (File.Exists(Path.Combine(certs, "ca.pem")))
                return certs;
        }

        Assert.Fail($"No certs folder above {AppContext.BaseDirectory}.");
        return string.Empty;
    }

    /// <summary>Waits for the next output line that starts with <paramref name="prefix"/> (earlier lines are skipped) and returns it.</summary>
    public async Task<string> WaitForLineAsync(string prefix)
    {
        using var timeout = new CancellationTokenSource(_timeout);
        try
        {
            while (await _lines.Reader.WaitToReadAsync(timeout.Token))
            {
                while (_lines.Reader.TryRead(out var line))
                {
                    if (line.StartsWith(prefix, StringComparison.Ordinal))
                        return line;
                }
            }
        }
        catch (OperationCanceledException)
        {
            Assert.Fail($"No line starting with \"{prefix}\" within {_timeout.TotalSeconds} s. Output:{Environment.NewLine}{Transcript}");
        }

        Assert.Fail($"The program ended without printing a line starting with \"{prefix}\". Output:{Environment.NewLine}{Transcript}");
        return string.Empty;
    }

    /// <summary>The next output line, whatever it is (for a program that answers each command with a line); null once the output ended.</summary>
    public async Task<string?> ReadLineAsync()
    {
        using var timeout = new CancellationTokenSource(_timeout);
        try
        {
            while (await _lines.Reader.WaitToReadAsync(timeout.Token))
            {
                if (_lines.Reader.TryRead(out var line))
                    return line;
            }
        }
        catch (OperationCanceledException)
        {
            Assert.Fail($"No output line within {_timeout.TotalSeconds} s. Output:{Environment.NewLine}{Transcript}");
        }

        return null;
    }

    /// <summary>Waits for output lines equal to each of <paramref name="expected"/>, in any order (other lines are skipped).</summary>
    public async Task WaitForLinesAsync(params string[] expected)
    {
        var missing = new HashSet<string>(expected, StringComparer.Ordinal);
        using var timeout = new CancellationTokenSource(_timeout);
        try
        {
            while (missing.Count > 0 && await _lines.Reader.WaitToReadAsync(timeout.Token))
            {
                while (missing.Count > 0 && _lines.Reader.TryRead(out var line))
                    missing.Remove(line);
            }
        }
        catch (OperationCanceledException)
        {
            // Reported below with what is missing.
        }

        Assert.True(missing.Count == 0, $"No line \"{string.Join("\", \"", missing)}\" within {_timeout.TotalSeconds} s. Output:{Environment.NewLine}{Transcript}");
    }

    /// <summary>Waits (bounded) for the program to end; returns its exit code.</summary>
    public async Task<int> WaitForExitAsync()
    {
        try
        {
            await _process.WaitForExitAsync().WaitAsync(_timeout);
        }
        catch (TimeoutException)
        {
            Assert.Fail($"The program did not exit within {_timeout.TotalSeconds} s. Output:{Environment.NewLine}{Transcript}");
        }

        return _process.ExitCode;
    }

    public async ValueTask DisposeAsync()
    {
        // Idempotent: a program may be disposed by its test and again by what started it (the NAT lab).
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
            return;
        try
        {
            if (!_process.HasExited)
            {
                _process.Kill(entireProcessTree: true);
                await _process.WaitForExitAsync().WaitAsync(_timeout);
            }
        }
        finally
        {
            _process.Dispose();
        }
    }

    private void OnOutput(string? line, string tag)
    {
        if (line is null)
        {
            if (tag.Length == 0)
                _lines.Writer.TryComplete();
            return;
        }

        _transcript.Enqueue(tag + line);
        if (tag.Length == 0)
            _lines.Writer.TryWrite(line);
    }
}
