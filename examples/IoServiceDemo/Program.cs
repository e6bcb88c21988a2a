// An IoService of two loops: where posted and dispatched work runs, counters kept without locks by
// pinning each key to one loop, a DeadlineTimer whose callback runs on a loop, and an echo server
// and client whose connections run on the loops.
//   dotnet run --project examples/IoServiceDemo -- [words]
using System;
using System.Collections.Generic;
using System.Net;
using System.Threading;
using System.Threading.Tasks;
using NetServer;
using NetServer.Examples.IoServiceDemo;

var words = args.Length > 0 ? int.Parse(args[0], System.Globalization.CultureInfo.InvariantCulture) : 100_000;
using var service = new DemoService(threads: 2);
service.Start();

// 1. Dispatch runs inline on a loop, Post always queues: the numbers show the order things ran in.
// (All on one loop: the service's own Post picks the next loop, which would run beside this one.)
var loop = service.Loops[0];
var ordered = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
loop.Post(() =>
{
    Console.WriteLine($"1 posted work, on {Thread.CurrentThread.Name}");
    loop.Post(() =>
    {
        Console.WriteLine("4 posted from a loop: runs after the work that posted it");
        ordered.SetResult();
    });
    loop.Dispatch(() => Console.WriteLine("2 dispatched from a loop: runs inline"));
    Console.WriteLine("3 back in the posted work");
});
await ordered.Task;

// 2. Each word is counted on the loop its hash picks: one thread per dictionary, so no lock.
var counts = new Dictionary<string, int>[service.Threads];
for (var i = 0; i < counts.Length; i++)
    counts[i] = new Dictionary<string, int>();
string[] vocabulary = ["alpha", "beta", "gamma", "delta", "epsilon"];
for (var i = 0; i < words; i++)
{
    var word = vocabulary[i % vocabulary.Length];
    var shard = (word.GetHashCode() & int.MaxValue) % service.Threads;
    var table = counts[shard];
    service.Loops[shard].Post(() => table[word] = table.GetValueOrDefault(word) + 1);
}

// 3. A timer on the service: its callback runs on one of the loops, not on the thread pool.
var finished = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
using var timer = new DeadlineTimer(service, canceled =>
{
    Console.WriteLine($"timer {(canceled ? "canceled" : "expired")} on {Thread.CurrentThread.Name}");
    finished.SetResult();
});
timer.Setup(TimeSpan.FromMilliseconds(100));
timer.WaitAsync();
await finished.Task;

// 4. An echo server and a client given the service: each connection is pinned to a loop, which on
// Linux polls its socket (epoll) and runs its hooks, so OnReceived runs on a loop thread.
var server = new LoopEchoServer(IPAddress.Loopback, 0) { Service = service };
server.Start();
var client = new LoopEchoClient(IPAddress.Loopback, server.Port) { Service = service };
client.ConnectAsync();
var (text, clientThread) = await client.Echoed.Task.WaitAsync(TimeSpan.FromSeconds(10));
Console.WriteLine($"echo \"{text}\": server hook on {server.HookThread}, client hook on {clientThread}"
    + (service.NativeTransportUnavailableReason is { } why ? $" ({why})" : string.Empty));
client.Disconnect();
server.Stop();

// Stop runs what is still queued, then ends the loops: the tables are final and safe to read here.
service.Stop();
foreach (var word in vocabulary)
{
    var shard = (word.GetHashCode() & int.MaxValue) % service.Threads;
    Console.WriteLine($"{word}: {counts[shard][word]} (loop {shard})");
}

Console.WriteLine($"errors: {service.Errors}");
