using System;
using System.Diagnostics;
using System.Globalization;
using System.Linq;
using System.Net;
using System.Text.Json;
using System.Threading.Tasks;
using NetServer.Protobuf;
using NetServer.Tests.Infrastructure;
using ProtoBuf;
using Xunit;

namespace NetServer.Tests.Examples;

/// <summary>
/// The benchmark CLI (<c>netserver-bench</c>) as build/bench.sh and a user run it: a child process
/// on real sockets, checked through its JSON result line and exit code. ssl runs in one process use
/// the repository's certs/ as a user's would (found from the program's folder); the tests that
/// talk TLS themselves give the CLI in-process certificates with --certs.
/// </summary>
public sealed partial class BenchmarkCliTests
{
    private const string Cli = "netserver-bench";
    private static readonly TimeSpan s_timeout = TimeSpan.FromSeconds(60);

    [Theory]
    [InlineData("tcp", "echo")]
    [InlineData("tcp", "multicast")]
    [InlineData("uds", "echo")]
    [InlineData("uds", "multicast")]
    [InlineData("ssl", "echo")]
    [InlineData("ssl", "multicast")]
    [InlineData("udp", "echo")]
    [InlineData("udp", "multicast")]
    [InlineData("tcp", "reply")]
    [InlineData("uds", "reply")]
    [InlineData("ssl", "reply")]
    [InlineData("msg", "echo")]
    [InlineData("msg", "multicast")]
    [InlineData("proto", "echo")]
    public async Task Both_roles_in_one_process_report_traffic_and_no_error(string protocol, string scenario)
    {
        await using var bench = ProgramProcess.Start(Cli, s_timeout, protocol, scenario, "-c", "3", "-z", "1", "-q");
        var result = await ResultAsync(bench);
        Assert.Equal(0, await bench.WaitForExitAsync());

        Assert.Equal(protocol, result.GetProperty("protocol").GetString());
        Assert.Equal(scenario, result.GetProperty("scenario").GetString());
        Assert.Equal("both", result.GetProperty("role").GetString());
        Assert.Equal(3, result.GetProperty("clients").GetInt32());
        Assert.Equal(0, result.GetProperty("errors").GetInt64());
        var bytes = result.GetProperty("totalBytes").GetInt64();
        Assert.True(bytes > 0, "No traffic was measured.");
        Assert.Equal(bytes / 32, result.GetProperty("totalMessages").GetInt64());
        Assert.True(result.GetProperty("messagesPerSecond").GetDouble() > 0);
        Assert.True(result.GetProperty("allocatedBytesPerMessage").GetDouble() >= 0);
    }

    [Theory]
    [InlineData("tcp", "echo")]
    [InlineData("ssl", "echo")]
    [InlineData("uds", "echo")]
    [InlineData("ssl", "multicast")]
    [InlineData("uds", "multicast")]
    public async Task Msg_runs_over_each_stream_transport_and_counts_messages(string transport, string scenario)
    {
        await using var bench = ProgramProcess.Start(Cli, s_timeout, "msg", scenario, "--transport", transport, "-c", "3", "-s", "20", "-z", "1", "-q");
        var result = await ResultAsync(bench);
        Assert.Equal(0, await bench.WaitForExitAsync());

        Assert.Equal("msg", result.GetProperty("protocol").GetString());
        Assert.Equal(transport, result.GetProperty("transport").GetString());
        Assert.Equal(0, result.GetProperty("errors").GetInt64());
        var messages = result.GetProperty("totalMessages").GetInt64();
        Assert.True(messages > 0, "No message was counted.");

        // Messages are counted one by one; the data is messages x size, without the 4-byte prefixes.
        Assert.Equal(messages * 20, result.GetProperty("totalBytes").GetInt64());
    }

    [Theory]
    [InlineData("tcp", false)]
    [InlineData("ssl", false)]
    [InlineData("uds", false)]
    [InlineData("tcp", true)]
    [InlineData("ssl", true)]
    [InlineData("uds", true)]
    public async Task Proto_echo_runs_over_each_stream_transport_and_allocates_only_when_typed(string transport, bool typed)
    {
        await using var bench = ProgramProcess.Start(Cli, s_timeout,
            ["proto", "echo", "--transport", transport, "-c", "3", "-s", "20", "-z", "1", "-q", .. typed ? new[] { "--typed" } : []]);
        var result = await ResultAsync(bench);
        Assert.Equal(0, await bench.WaitForExitAsync());

        Assert.Equal("proto", result.GetProperty("protocol").GetString());
        Assert.Equal(transport, result.GetProperty("transport").GetString());
        Assert.Equal(typed, result.GetProperty("typed").GetBoolean());
        Assert.Equal(0, result.GetProperty("errors").GetInt64());
        var messages = result.GetProperty("totalMessages").GetInt64();
        Assert.True(messages > 0, "No envelope was counted.");

        // Envelopes are counted one by one; the data is messages x the payload's size.
        Assert.Equal(messages * 20, result.GetProperty("totalBytes").GetInt64());

        // protobuf-net allocates a BenchPing and its byte[] per deserialization. The typed echo
        // deserializes once per message (on the server), so it allocates at least most of that
        // (the window's edges and the run's own allocations move it a little); the other echo
        // deserializes nothing, so it stays far below.
        var protobufNet = result.GetProperty("protobufNetBytesPerDeserialize").GetDouble();
        var perMessage = result.GetProperty("allocatedBytesPerMessage").GetDouble();
        Assert.True(protobufNet >= 40, $"protobuf-net allocated {protobufNet} B per deserialization, less than a BenchPing and its data.");
        if (typed)
            Assert.True(perMessage >= 0.8 * protobufNet, $"The typed echo allocated {perMessage} B/msg, less than protobuf-net's {protobufNet} B: the server did not unpack.");
        else
            Assert.True(perMessage < 0.5 * protobufNet, $"The echo allocated {perMessage} B/msg against protobuf-net's {protobufNet} B per deserialization.");
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task Proto_echo_server_returns_each_envelope_as_it_came_or_typed_in_a_reply_envelope(bool typed)
    {
        await using var server = ProgramProcess.Start(Cli, s_timeout,
            ["proto", "echo", "--role", "server", "-p", "0", "-z", "0", "-q", .. typed ? new[] { "--typed" } : []]);
        var port = PortOf(await server.WaitForLineAsync("Server listening on "));

        using var client = new ProtoClient(IPAddress.Loopback, port);
        Assert.True(await client.ConnectAsync().WaitAsync(s_timeout));
        var (from, to) = (Guid.NewGuid(), Guid.NewGuid());
        for (var i = 1; i <= 3; i++)
        {
            var sent = new MessageEnvelope("bench/echo") { From = from, To = to }.WithProperty("round", $"{i}");
            var ping = new Ping { Sequence = 1000 * i, Data = Enumerable.Range(0, 10 * i).Select(b => (byte)(b + i)).ToArray() };
            Assert.True(client.SendAsync(sent, ping));
            var echoed = await client.ReceiveEnvelopeAsync().AsTask().WaitAsync(s_timeout);

            Assert.Equal(sent.Id, echoed.Id);
            Assert.Equal("bench/echo", echoed.Header);
            Assert.Equal(sent.Timestamp?.ToUnixTimeMilliseconds(), echoed.Timestamp?.ToUnixTimeMilliseconds());
            var back = echoed.Unpack<Ping>();
            Assert.Equal(ping.Sequence, back.Sequence);
            Assert.Equal(ping.Data, back.Data);
            if (typed)
            {
                // A reply envelope of the server's own: sender and addressee swapped, no properties.
                Assert.Equal((to, from), (echoed.From, echoed.To));
                Assert.Empty(echoed.Properties);
            }
            else
            {
                // The envelope as it came, every field kept.
                Assert.Equal((from, to), (echoed.From, echoed.To));
                Assert.Equal($"{i}", echoed.GetProperty("round"));
            }
        }
    }

    [Fact]
    public async Task Proto_typed_server_in_its_own_process_allocates_what_protobuf_net_does_per_message()
    {
        // The server's figures come from its own process: only its sessions allocate there. It
        // needs three seconds with traffic for a steady-state window; it runs 10 s so that the
        // client's 6 s (at least three active seconds after a slow, JIT-bound start) fit even when a
        // loaded machine starts the client seconds late.
        await using var server = ProgramProcess.Start(Cli, s_timeout, "proto", "echo", "--typed", "--role", "server", "-p", "0", "-z", "10", "-q");
        var port = PortOf(await server.WaitForLineAsync("Server listening on "));
        await using var client = ProgramProcess.Start(Cli, s_timeout,
            "proto", "echo", "--role", "client", "-p", port.ToString(CultureInfo.InvariantCulture), "-c", "2", "-z", "6", "-q");

        var measured = await ResultAsync(client);
        Assert.Equal(0, await client.WaitForExitAsync());
        Assert.Equal(0, measured.GetProperty("errors").GetInt64());
        Assert.False(measured.TryGetProperty("typed", out _), "A client in its own process cannot know whether the server's echo is typed.");

        var result = await ResultAsync(server);
        Assert.Equal(0, await server.WaitForExitAsync());
        Assert.Equal("server", result.GetProperty("role").GetString());
        Assert.True(result.GetProperty("typed").GetBoolean());
        Assert.Equal(0, result.GetProperty("errors").GetInt64());
        var messages = result.GetProperty("totalMessages").GetInt64();
        Assert.True(messages > 0, "The server counted no envelope.");
        Assert.Equal(messages * 32, result.GetProperty("totalBytes").GetInt64());

        // One Unpack per envelope and nothing else per envelope: the engine, the envelope parser and
        // the typed send allocate nothing (a little slack for the process's own background work).
        var protobufNet = result.GetProperty("protobufNetBytesPerDeserialize").GetDouble();
        var perMessage = result.GetProperty("allocatedBytesPerMessage").GetDouble();
        Assert.InRange(perMessage, 0.9 * protobufNet, protobufNet + 8);
    }

    [Theory]
    [InlineData("tcp")]
    [InlineData("ssl")]
    [InlineData("udp")]
    [InlineData("msg")]
    [InlineData("proto")]
    [InlineData("ws")]
    [InlineData("wss")]
    public async Task Server_and_client_roles_run_as_separate_processes(string protocol)
    {
        using var certificates = new CertificateFolder();
        await using var server = ProgramProcess.Start(Cli, s_timeout, [protocol, "echo", "--role", "server", "-p", "0", "-z", "0", "-q", .. certificates.Option(protocol)]);
        var port = PortOf(await server.WaitForLineAsync("Server listening on "));

        await using var client = ProgramProcess.Start(Cli, s_timeout,
            [protocol, "echo", "--role", "client", "-p", port.ToString(CultureInfo.InvariantCulture), "-c", "2", "-z", "1", "-q", .. certificates.Option(protocol)]);
        var result = await ResultAsync(client);
        Assert.Equal(0, await client.WaitForExitAsync());
        Assert.Equal(protocol, result.GetProperty("protocol").GetString());
        Assert.Equal("client", result.GetProperty("role").GetString());
        Assert.Equal(0, result.GetProperty("errors").GetInt64());
        Assert.True(result.GetProperty("totalMessages").GetInt64() > 0, "The client measured no echo.");
        if (protocol == "udp")
        {
            var d = result.GetProperty("datagrams");
            Assert.Equal(d.GetProperty("sent").GetInt64() - d.GetProperty("received").GetInt64(), d.GetProperty("lost").GetInt64());
        }
    }

    [Theory]
    [InlineData("Unknown protocol", "foo", "echo")]
    [InlineData("Unknown scenario", "tcp", "bar")]
    [InlineData("udp has no handshake", "udp", "handshake")]
    [InlineData("udp has no reply", "udp", "reply")]
    [InlineData("udp has no latency", "udp", "latency")]
    [InlineData("msg has no reply", "msg", "reply")]
    [InlineData("Unknown transport", "msg", "echo", "--transport", "udp")]
    [InlineData("--transport is for msg and proto", "tcp", "echo", "--transport", "ssl")]
    [InlineData("proto has no multicast", "proto", "multicast")]
    [InlineData("--typed is for proto echo", "msg", "echo", "--typed")]
    [InlineData("needs --size 5 or more", "proto", "echo", "-s", "4")]
    [InlineData("Option -c needs an integer", "tcp", "echo", "-c", "abc")]
    [InlineData("http has no echo scenario", "http", "echo")]
    [InlineData("get, pipeline and trace are http and https scenarios", "tcp", "get")]
    [InlineData("Warm-up seconds must be from 0 to 3600", "tcp", "echo", "-w", "-1")]
    [InlineData("Cannot load the TLS certificates", "ssl", "echo", "--certs", "/nonexistent/netserver-bench-certs")]
    public async Task Bad_arguments_exit_with_code_2_and_say_what_is_wrong(string message, params string[] args)
    {
        await using var bench = ProgramProcess.Start(Cli, s_timeout, args);
        Assert.Equal(2, await bench.WaitForExitAsync());
        Assert.Contains(message, bench.Transcript, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("tcp", "echo")]
    [InlineData("tcp", "latency")]
    [InlineData("ssl", "handshake")]
    public async Task Warm_up_runs_traffic_before_the_measured_window_and_leaves_it_out(string protocol, string scenario)
    {
        await using var bench = ProgramProcess.Start(Cli, s_timeout, protocol, scenario, "-c", "2", "-z", "1", "-w", "3", "-q");
        await bench.WaitForLineAsync("Seconds of warm-up: 3");
        var started = Stopwatch.StartNew();
        var result = await ResultAsync(bench);
        var elapsed = started.Elapsed;
        Assert.Equal(0, await bench.WaitForExitAsync());

        // The result comes after the warm-up and the window (about 1 s when the warm-up is skipped),
        // and the window it reports is the 1 s asked for, not the 4 s of traffic.
        Assert.True(elapsed >= TimeSpan.FromSeconds(3.9), $"The result came {elapsed.TotalSeconds:F2} s after the header: no warm-up before the window.");
        var window = result.GetProperty("totalSeconds").GetDouble();
        Assert.InRange(window, 0.9, 2.5);
        Assert.Equal(0, result.GetProperty("errors").GetInt64());
    }

    /// <summary>A latency result: round trips were timed, and min &lt;= p50 &lt;= p99 &lt;= p99.9 &lt;= max, all above zero.</summary>
    private static void AssertSaneRoundTrips(JsonElement result)
    {
        Assert.True(result.GetProperty("roundTrips").GetInt64() > 0, "No round trip was timed.");
        Assert.True(result.GetProperty("roundTripsPerSecond").GetDouble() > 0);
        var times = new[] { "minNs", "p50Ns", "p99Ns", "p999Ns", "maxNs" }.Select(name => result.GetProperty(name).GetInt64()).ToArray();
        Assert.True(times[0] > 0, $"A round trip took no time: {string.Join(", ", times)} ns.");
        for (var i = 1; i < times.Length; i++)
            Assert.True(times[i - 1] <= times[i], $"Round-trip times (min, p50, p99, p99.9, max) out of order: {string.Join(", ", times)} ns.");
        var mean = result.GetProperty("meanNs").GetDouble();
        Assert.True(times[0] <= mean && mean <= times[^1], $"The mean {mean} ns is outside [min, max].");
    }

    /// <summary>The JSON result line the CLI prints last.</summary>
    private static async Task<JsonElement> ResultAsync(ProgramProcess bench)
    {
        var line = await bench.WaitForLineAsync("{\"protocol\"");
        using var document = JsonDocument.Parse(line);
        return document.RootElement.Clone();
    }

    private static int PortOf(string listening)
    {
        // "Server listening on 127.0.0.1:PORT; stops ..."
        var endpoint = listening["Server listening on ".Length..].Split(';')[0];
        return IPEndPoint.Parse(endpoint).Port;
    }

    /// <summary>message Ping { int64 sequence = 1; bytes data = 2; }: the fields of the CLI's BenchPing, declared here as any peer of the wire would.</summary>
    [ProtoContract]
    public sealed class Ping
    {
        [ProtoMember(1)]
        public long Sequence { get; set; }

        [ProtoMember(2)]
        public byte[]? Data { get; set; }
    }
}
