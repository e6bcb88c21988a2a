using System;
using System.ComponentModel;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace NetServer.P2P.Tests.Nat;

/// <summary>What a finished command printed and its exit code.</summary>
internal readonly record struct CommandResult(int ExitCode, string Output, string Error)
{
    public bool Succeeded => ExitCode == 0;
}

/// <summary>Runs the lab's commands (ip, iptables-restore, tc, sysctl), each bounded in time.</summary>
internal static class LabShell
{
    /// <summary>The bound of one command: each takes milliseconds, so this only catches a hang.</summary>
    public static readonly TimeSpan CommandTimeout = TimeSpan.FromSeconds(10);

    private static readonly string[] s_sbin = ["/usr/local/sbin", "/usr/sbin", "/sbin"];

    /// <summary>Runs <paramref name="command"/>; its output, or a <see cref="NatLabException"/> naming it when it fails.</summary>
    public static async Task<string> RunAsync(params string[] command) => Check(command, await TryRunAsync(null, command));

    /// <summary>As <see cref="RunAsync"/>, with <paramref name="input"/> on the command's stdin.</summary>
    public static async Task<string> RunWithInputAsync(string input, params string[] command) => Check(command, await TryRunAsync(input, command));

    /// <summary>Runs <paramref name="command"/> and returns what it printed, whatever its exit code.</summary>
    public static async Task<CommandResult> TryRunAsync(string? input, params string[] command)
    {
        using var process = Start(command, input is not null);
        var output = process.StandardOutput.ReadToEndAsync();
        var error = process.StandardError.ReadToEndAsync();
        if (input is not null)
        {
            await process.StandardInput.WriteAsync(input);
            process.StandardInput.Close();
        }

        using var timeout = new CancellationTokenSource(CommandTimeout);
        try
        {
            await process.WaitForExitAsync(timeout.Token);
        }
        catch (OperationCanceledException)
        {
            process.Kill(entireProcessTree: true);
            throw new NatLabException($"`{string.Join(' ', command)}` did not finish within {CommandTimeout.TotalSeconds} s.");
        }

        return new CommandResult(process.ExitCode, await output, await error);
    }

    /// <summary>
    /// As <see cref="TryRunAsync"/>, blocking: for the places that cannot await (a fact attribute's
    /// constructor while xunit discovers tests, the process-exit teardown). Bounded all the same.
    /// </summary>
    public static CommandResult TryRunBlocking(params string[] command)
    {
        var output = new StringBuilder();
        var error = new StringBuilder();
        using var process = Start(command, redirectInput: false);
        process.OutputDataReceived += (_, e) => Append(output, e.Data);
        process.ErrorDataReceived += (_, e) => Append(error, e.Data);
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        if (!process.WaitForExit(CommandTimeout))
        {
            process.Kill(entireProcessTree: true);
            return new CommandResult(-1, "", $"`{string.Join(' ', command)}` did not finish within {CommandTimeout.TotalSeconds} s.");
        }

        // The exited process's output is complete; this drains the last lines into the builders.
        process.WaitForExit();
        lock (output)
        {
            lock (error)
                return new CommandResult(process.ExitCode, output.ToString(), error.ToString());
        }
    }

    /// <summary>
    /// The full path of a tool: from PATH, else from the sbin folders a non-login root shell may lack
    /// on its PATH (tc, sysctl, iptables live there on Debian). Unknown tools are left to PATH.
    /// </summary>
    public static string Resolve(string tool)
    {
        if (tool.Contains('/', StringComparison.Ordinal))
            return tool;
        var path = Environment.GetEnvironmentVariable("PATH") ?? "";
        foreach (var folder in path.Split(':', StringSplitOptions.RemoveEmptyEntries).Concat(s_sbin))
        {
            var candidate = Path.Combine(folder, tool);
            if (File.Exists(candidate))
                return candidate;
        }

        return tool;
    }

    private static Process Start(string[] command, bool redirectInput)
    {
        command = [.. command];
        command[0] = Resolve(command[0]);

        // ip execs the command it runs inside a namespace from PATH, which may lack sbin.
        if (command is [_, "netns", "exec", _, _, ..])
            command[4] = Resolve(command[4]);
        var info = new ProcessStartInfo(command[0])
        {
            UseShellExecute = false,
            RedirectStandardInput = redirectInput,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        };
        foreach (var argument in command[1..])
            info.ArgumentList.Add(argument);
        try
        {
            return Process.Start(info) ?? throw new NatLabException($"`{command[0]}` did not start.");
        }
        catch (Win32Exception e)
        {
            throw new NatLabException($"`{command[0]}` cannot be started (build/install-tools.sh installs the lab's tools): {e.Message}", e);
        }
    }

    private static string Check(string[] command, CommandResult result) => result.Succeeded
        ? result.Output
        : throw new NatLabException($"`{string.Join(' ', command)}` exited with {result.ExitCode}: {result.Error.Trim()}{result.Output.Trim()}");

    private static void Append(StringBuilder text, string? line)
    {
        if (line is null)
            return;
        lock (text)
            text.AppendLine(line);
    }
}
