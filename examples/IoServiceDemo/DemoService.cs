using System;
using System.Threading;

namespace NetServer.Examples.IoServiceDemo;

/// <summary>An IoService that says when it starts and stops and counts the failures of posted work.</summary>
internal sealed class DemoService(int threads) : IoService(threads)
{
    private int _errors;

    public int Errors => Volatile.Read(ref _errors);

    protected override void OnStarted() => Console.WriteLine($"service started: {Threads} loops");

    protected override void OnStopped() => Console.WriteLine("service stopped");

    protected override void OnError(Exception exception)
    {
        Interlocked.Increment(ref _errors);
        Console.WriteLine($"error: {exception.Message}");
    }
}
