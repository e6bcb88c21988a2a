using System;
using System.IO;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Threading.Tasks;
using NetServer.Protobuf;

namespace NetServer.Examples.Proto;

internal static class Program
{
    /// <summary>
    /// ProtoClient [port] [address] | ProtoClient --uds [path]: sends 10 "math/sum" requests at
    /// once to the example server (typed payloads, replies matched by correlation id), then one
    /// "math/slow" request with a 100 ms timeout, and prints what came back.
    /// </summary>
    private static async Task<int> Main(string[] args)
    {
        EndPoint endpoint = args.Length > 0 && args[0] == "--uds"
            ? new UnixDomainSocketEndPoint(args.Length > 1 ? args[1] : Path.Combine(Path.GetTempPath(), "netserver-proto.sock"))
            : new IPEndPoint(
                args.Length > 1 ? IPAddress.Parse(args[1]) : IPAddress.Loopback,
                args.Length > 0 ? int.Parse(args[0], System.Globalization.CultureInfo.InvariantCulture) : Routes.DefaultPort);

        using var client = new ProtoClient(endpoint);
        if (!await client.ConnectAsync())
        {
            Console.Error.WriteLine($"Could not connect to {endpoint}: {client.DisconnectReason}. Is examples/ProtoServer running?");
            return 1;
        }

        var me = Guid.NewGuid();
        var requests = Enumerable.Range(1, 10).Select(n =>
            client.RequestAsync<SumRequest, SumReply>(
                new MessageEnvelope(Routes.Sum) { From = me },
                new SumRequest { Values = [.. Enumerable.Range(1, n * 100)] },
                TimeSpan.FromSeconds(5))).ToArray();
        var failed = 0;
        for (var i = 0; i < requests.Length; i++)
        {
            try
            {
                var reply = await requests[i];
                Console.WriteLine($"sum(1..{(i + 1) * 100}) = {reply.Sum} ({reply.Count} values)");
            }
            catch (Exception e) when (e is TimeoutException or IOException)
            {
                failed++;
                Console.WriteLine($"request {i + 1} failed: {e.Message}");
            }
        }

        try
        {
            await client.RequestAsync<SumRequest, SumReply>(new MessageEnvelope(Routes.Slow) { From = me }, new SumRequest(), TimeSpan.FromMilliseconds(100));
            Console.WriteLine("slow: answered in time (unexpected)");
        }
        catch (TimeoutException e)
        {
            Console.WriteLine($"slow: {e.Message} Pending now: {client.PendingRequests}.");
        }

        Console.WriteLine($"Done: {requests.Length - failed} replies, {failed} failed.");
        await client.DisconnectAsync();
        return failed == 0 ? 0 : 1;
    }
}
