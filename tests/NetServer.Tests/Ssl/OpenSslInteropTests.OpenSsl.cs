using System;
using System.Collections.Concurrent;
using System.Diagnostics;
using System.IO;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Threading;
using System.Threading.Channels;
using System.Threading.Tasks;
using Xunit;

namespace NetServer.Tests.Ssl;

public sealed partial class OpenSslInteropTests
{
    /// <summary>
    /// The <c>openssl</c> tool as a child process: its stdin written by line, its stdout and stderr
    /// read by line (stdout lines can be waited for), every wait bounded, killed when disposed.
    /// </summary>
    private sealed class OpenSsl : IAsyncDisposable
    {
        private readonly Process _process;
        private readonly Channel<string> _lines = Channel.CreateUnbounded<string>();
        private readonly ConcurrentQueue<string> _transcript = new();

        private OpenSsl(Process process)
        {
            _process = process;
            _process.OutputDataReceived += (_, e) => OnOutput(e.Data, stdout: true);
            _process.ErrorDataReceived += (_, e) => OnOutput(e.Data, stdout: false);
            _process.BeginOutputReadLine();
            _process.BeginErrorReadLine();
        }

        /// <summary>The port an <c>s_server</c> listens on.</summary>
        public int Port { get; private set; }

        public string Transcript => string.Join(Environment.NewLine, _transcript);

        public static OpenSsl Start(string directory, params string[] args)
        {
            var info = new ProcessStartInfo(FindTool())
            {
                UseShellExecute = false,
                RedirectStandardInput = true,
                RedirectStandardOutput = true,
                RedirectStandardError = true,
                WorkingDirectory = directory,
                StandardInputEncoding = new UTF8Encoding(encoderShouldEmitUTF8Identifier: false),
                StandardOutputEncoding = Encoding.UTF8,
                StandardErrorEncoding = Encoding.UTF8,
            };
            foreach (var arg in args)
                info.ArgumentList.Add(arg);
            return new OpenSsl(Process.Start(info) ?? throw new InvalidOperationException("openssl did not start"));
        }

        /// <summary>
        /// Starts <c>openssl s_server</c> on a free loopback port (found by binding port 0 and
        /// letting it go; another process may take it meanwhile, so a failed bind is retried on
        /// another port) and returns once it listens ("ACCEPT").
        /// </summary>
        public static async Task<OpenSsl> StartServerAsync(string directory, params string[] args)
        {
            var transcripts = new StringBuilder();
            for (var attempt = 0; attempt < 5; attempt++)
            {
                int port;
                using (var probe = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp))
                {
                    probe.Bind(new IPEndPoint(IPAddress.Loopback, 0));
                    port = ((IPEndPoint)probe.LocalEndPoint!).Port;
                }

                var server = Start(directory, ["s_server", "-accept", $"127.0.0.1:{port}", .. args]);
                var listening = false;
                try
                {
                    listening = await server.TryWaitForLineAsync(line => line == "ACCEPT") is not null;
                }
                finally
                {
                    if (!listening)
                    {
                        transcripts.AppendLine(server.Transcript);
                        await server.DisposeAsync();
                    }
                }

                if (listening)
                {
                    server.Port = port;
                    return server;
                }
            }

            Assert.Fail("openssl s_server did not start listening in 5 attempts:" + Environment.NewLine + transcripts);
            return null!;
        }

        public async Task WriteLineAsync(string line)
        {
            // "\n" only: s_client and s_server pass stdin on byte for byte.
            await _process.StandardInput.WriteAsync(line + "\n").WaitAsync(s_timeout);
            await _process.StandardInput.FlushAsync().WaitAsync(s_timeout);
        }

        /// <summary>
        /// Waits for a stdout line matching <paramref name="match"/> (earlier lines are skipped); fails
        /// the test on timeout or exit. openssl writes the peer's data unbuffered and its own reports
        /// through a buffer, so data can land in the middle of a report line: match data with Contains.
        /// </summary>
        public async Task<string> WaitForLineAsync(Func<string, bool> match, string what) =>
            await TryWaitForLineAsync(match)
            ?? throw new Xunit.Sdk.XunitException($"openssl exited before {what}. Output:{Environment.NewLine}{Transcript}");

        /// <summary>As <see cref="WaitForLineAsync"/>, but null when openssl exits first.</summary>
        private async Task<string?> TryWaitForLineAsync(Func<string, bool> match)
        {
            using var timeout = new CancellationTokenSource(s_timeout);
            try
            {
                while (await _lines.Reader.WaitToReadAsync(timeout.Token))
                {
                    while (_lines.Reader.TryRead(out var line))
                    {
                        if (match(line))
                            return line;
                    }
                }
            }
            catch (OperationCanceledException)
            {
                Assert.Fail($"No matching openssl output within {s_timeout.TotalSeconds} s. Output:{Environment.NewLine}{Transcript}");
            }

            return null;
        }

        /// <summary>Waits (bounded) for openssl to end on its own.</summary>
        public async Task WaitForExitAsync()
        {
            try
            {
                await _process.WaitForExitAsync().WaitAsync(s_timeout);
            }
            catch (TimeoutException)
            {
                Assert.Fail($"openssl did not exit within {s_timeout.TotalSeconds} s. Output:{Environment.NewLine}{Transcript}");
            }
        }

        public async ValueTask DisposeAsync()
        {
            try
            {
                if (!_process.HasExited)
                {
                    _process.Kill(entireProcessTree: true);
                    await _process.WaitForExitAsync().WaitAsync(s_timeout);
                }
            }
            finally
            {
                _process.Dispose();
            }
        }

        private static string FindTool()
        {
            foreach (var folder in (Environment.GetEnvironmentVariable("PATH") ?? "").Split(Path.PathSeparator, StringSplitOptions.RemoveEmptyEntries))
            {
                var candidate = Path.Combine(folder, "openssl");
                if (File.Exists(candidate))
                    return candidate;
            }

            if (File.Exists("/usr/bin/openssl"))
                return "/usr/bin/openssl";
            Assert.Fail("The openssl command-line tool was not found on PATH or at /usr/bin/openssl. It is part of Debian's base system; install it with `apt-get install openssl`.");
            return null!;
        }

        private void OnOutput(string? line, bool stdout)
        {
            if (line is null)
            {
                if (stdout)
                    _lines.Writer.TryComplete();
                return;
            }

            _transcript.Enqueue(stdout ? line : "stderr: " + line);
            if (stdout)
                _lines.Writer.TryWrite(line);
        }
    }
}
