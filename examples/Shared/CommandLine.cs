using System;
using System.Collections.Generic;

namespace NetServer.Examples;

/// <summary>
/// A program's arguments split into positional ones and "--name" options: switches, and options
/// that take the next argument as their value. Options may stand anywhere among the positional ones.
/// </summary>
internal sealed class CommandLine
{
    private readonly List<string> _positional = [];
    private readonly HashSet<string> _switches = new(StringComparer.Ordinal);
    private readonly Dictionary<string, string> _values = new(StringComparer.Ordinal);

    private CommandLine()
    {
    }

    /// <summary>
    /// Splits <paramref name="args"/>. An unknown option, or an option without its value, is
    /// printed with <paramref name="usage"/> and gives null.
    /// </summary>
    public static CommandLine? Parse(string[] args, string usage, string[] switches, string[] options)
    {
        var line = new CommandLine();
        for (var i = 0; i < args.Length; i++)
        {
            var arg = args[i];
            if (!arg.StartsWith("--", StringComparison.Ordinal))
                line._positional.Add(arg);
            else if (Array.IndexOf(switches, arg) >= 0)
                line._switches.Add(arg);
            else if (Array.IndexOf(options, arg) < 0)
                return Reject($"Unknown option {arg}.", usage);
            else if (i + 1 == args.Length)
                return Reject($"{arg} needs a value.", usage);
            else
                line._values[arg] = args[++i];
        }

        return line;
    }

    /// <summary>The positional argument at <paramref name="index"/> (options not counted), or null if there are fewer.</summary>
    public string? Positional(int index) => index < _positional.Count ? _positional[index] : null;

    /// <summary>Whether the switch was given.</summary>
    public bool Has(string @switch) => _switches.Contains(@switch);

    /// <summary>The value given to <paramref name="option"/>, or null.</summary>
    public string? ValueOf(string option) => _values.GetValueOrDefault(option);

    private static CommandLine? Reject(string error, string usage)
    {
        Console.WriteLine(error);
        Console.WriteLine(usage);
        return null;
    }
}
