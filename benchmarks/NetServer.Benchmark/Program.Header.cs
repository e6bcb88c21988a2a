using System;
using System.Globalization;
using System.Threading.Tasks;

namespace NetServer.Benchmark;

/// <summary>The header a run prints before its figures: what is measured, with which settings.</summary>
internal static partial class Program
{
    private static void PrintHeader(Options o, PeerFactory peers)
    {
        Console.WriteLine($"Protocol: {o.Protocol}, scenario: {o.Scenario}, role: {o.Role.ToString().ToLowerInvariant()}");
        if (o.IsMessageProtocol || o.IsHttp || o.IsWebSocket)
            Console.WriteLine($"Transport: {o.Transport}");
        if (o.IsWebSocket)
            Console.WriteLine($"Messages: {(o.Text ? "text" : "binary")}{(o.Role == Role.Server ? "" : $"; upgrade request: GET {o.RequestPath}")}");
        if (o.Protocol == "proto")
            Console.WriteLine($"Envelope: {peers.Envelope.Length} bytes with a {o.Size}-byte BenchPing payload; the server {(o.Typed ? "unpacks the payload and sends it back typed" : "sends each envelope back as it came")}");
        Console.WriteLine(o.Transport == "uds" ? $"Server path: {o.EffectivePath}" : $"Server address: {o.Address}");
        if (o.Transport != "uds")
            Console.WriteLine(o.EffectivePort == 0 ? "Server port: any free port" : $"Server port: {o.EffectivePort}");
        if (peers.CertificateFolder is not null)
            Console.WriteLine($"Certificates: {peers.CertificateFolder}");
        if (o.Protocol == "sudp")
            Console.WriteLine($"Secure UDP: AES-256-GCM, one session per client, {SecureUdpSession.Overhead} bytes of header and tag per datagram");
        if (peers.Group is not null)
            Console.WriteLine($"Multicast group: {peers.Group} on interface {(peers.MulticastInterface == 0 ? "of the system's choice" : $"index {peers.MulticastInterface}")}");
        if (o.Scenario == "multicast" && o.Role != Role.Client && o.Rate > 0)
            Console.WriteLine($"Multicast rate: {o.Rate} msg/s");
        if (o.Role != Role.Server)
        {
            Console.WriteLine($"Working clients: {o.Clients}");
            if (o.Scenario == "echo")
                Console.WriteLine(o.IsDatagram ? $"Working messages: {o.Messages} datagrams in flight per client" : $"Working messages: {o.Messages}");
            else if (o.Scenario == "reply")
                Console.WriteLine($"Working messages: {o.Messages}, each answered with a send of its own");
            else if (o.Scenario == "latency")
                Console.WriteLine("Working messages: 1 in flight per client");
            else if (o.IsHttp)
                Console.WriteLine($"Working requests: {o.Depth} in flight per client");
        }

        if (o.Scenario != "handshake" && !o.IsHttp)
            Console.WriteLine($"Message size: {o.Size}");
        if (o.WarmupSeconds > 0 && o.Role != Role.Server)
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"Seconds of warm-up: {o.WarmupSeconds}"));
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"Seconds to benchmarking: {o.Seconds}"));
    }

    /// <summary>--warmup: the traffic already started runs this long before the caller opens its measured window.</summary>
    private static Task WarmUpAsync(Options o) =>
        o.WarmupSeconds > 0 ? Task.Delay(TimeSpan.FromSeconds(o.WarmupSeconds)) : Task.CompletedTask;
}
