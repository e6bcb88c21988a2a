using BenchmarkDotNet.Running;

namespace NetServer.MicroBenchmarks;

internal static class Program
{
    private static void Main(string[] args)
    {
        // Not a BenchmarkDotNet run: the 100k-deadline memory and CPU measurement (docs/timers.md).
        if (args.Length > 0 && args[0] == "timer-load")
        {
            TimerLoad.Run(args[1..]);
            return;
        }

        BenchmarkSwitcher.FromAssembly(typeof(Program).Assembly).Run(args);
    }
}
