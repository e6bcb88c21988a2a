using System;
using System.IO;
using System.Linq;
using NetServer.Fuzz;
using SharpFuzz;

// netserver-fuzz list                    the targets
// netserver-fuzz TARGET                  run under afl-fuzz (build/fuzz.sh): one input per fork
// netserver-fuzz TARGET --replay PATH..  run files (or every file of folders) once each; exit 1 on a broken rule
if (args.Length == 0 || args[0] == "list")
{
    foreach (var t in FuzzTarget.All)
        Console.WriteLine($"{t.Name,-16} {t.Describes}");
    return args.Length == 0 ? 2 : 0;
}

var target = FuzzTarget.Find(args[0]);
if (target is null)
{
    Console.Error.WriteLine($"No target '{args[0]}'. `netserver-fuzz list` names them.");
    return 2;
}

if (args.Length > 1 && args[1] == "--replay")
{
    var files = args.Skip(2).SelectMany(p => Directory.Exists(p) ? Directory.GetFiles(p) : [p]).Order().ToArray();
    var failed = 0;
    foreach (var file in files)
    {
        try
        {
            target.Run(File.ReadAllBytes(file));
        }
        catch (Exception e)
        {
            failed++;
            Console.Error.WriteLine($"{file}: {e.GetType().Name}: {e.Message}");
        }
    }

    Console.WriteLine($"{target.Name}: {files.Length} inputs, {failed} failed");
    return failed == 0 ? 0 : 1;
}

Fuzzer.OutOfProcess.Run(stream =>
{
    using var memory = new MemoryStream();
    stream.CopyTo(memory);
    target.Run(memory.GetBuffer().AsSpan(0, (int)memory.Length));
});
return 0;
