using System;
using System.Net;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Protobuf.Tests.Infrastructure;
using NetServer.Tests.Infrastructure;
using ProtoBuf;
using Xunit;
using Xunit.Abstractions;

namespace NetServer.Protobuf.Tests.Performance;

/// <summary>
/// What an envelope echo allocates on top of protobuf-net: a 32-byte <see cref="Ping"/> payload,
/// deserialized on each side (server and client), measured over the whole process (receive loops,
/// socket engine, sends) against what <c>Serializer.Deserialize&lt;Ping&gt;</c> itself allocates.
/// </summary>
[Collection(nameof(AllocationCollection))]
public sealed class EchoAllocationTests(ITestOutputHelper output)
{
    private const int Echoes = 20_000;
    private const int Window = 100;

    [Fact]
    public async Task An_echo_allocates_no_more_than_the_payload_objects_protobuf_net_creates()
    {
        var payload = new byte[32];
        var ping = new Ping { Sequence = 123_456, Data = new byte[26] };
        using (var stream = new System.IO.MemoryStream(payload))
            Serializer.Serialize(stream, ping);
        Assert.Equal(32, Serializer.Measure(ping).Length);

        // protobuf-net alone: one Ping and its byte[] per deserialization (the least of a few
        // windows, so a one-off allocation of the runtime does not raise the allowance).
        var protobufNet = Allocations.Least(() => Serializer.Deserialize<Ping>((ReadOnlySpan<byte>)payload), roundsPerWindow: 10_000, warmUp: 1000) / 10_000.0;

        using var server = new EchoServer();
        Assert.True(server.Start());
        using var client = new EchoClient(server.Endpoint);
        Assert.True(await client.ConnectAsync().WaitAsync(Wait.Default));
        await client.RunAsync(Echoes, Window).WaitAsync(TimeSpan.FromSeconds(60)); // warm up: pools, JIT, send queues

        var process = GC.GetTotalAllocatedBytes(precise: true);
        var clock = System.Diagnostics.Stopwatch.StartNew();
        await client.RunAsync(Echoes, Window).WaitAsync(TimeSpan.FromSeconds(60));
        var elapsed = clock.Elapsed;
        var perEcho = (GC.GetTotalAllocatedBytes(precise: true) - process) / (double)Echoes;

        output.WriteLine($"protobuf-net Deserialize<Ping> (32 B payload): {protobufNet:0.#} B");
        output.WriteLine($"envelope echo, whole process: {perEcho:0.#} B per echo (two envelopes, two deserializations; {perEcho / 2:0.#} B per envelope); {Echoes / elapsed.TotalSeconds:0} echoes/s with {Window} in flight");

        // Two deserializations per echo (server and client), nothing per message on top (small slack for
        // the test host's own background allocations while it runs).
        Assert.True(perEcho <= 2 * protobufNet + 16, $"{perEcho:0.#} B per echo against {2 * protobufNet:0.#} B that protobuf-net allocates");
    }

    private sealed class EchoSession(ProtoServer server) : ProtoSession(server)
    {
        private readonly MessageEnvelope _reply = new() { Header = "echo" };

        protected override void OnMessage(in ProtoMessage message)
        {
            _reply.Id = message.Id;
            SendAsync(_reply, message.Unpack<Ping>());
        }
    }

    private sealed class EchoServer() : ProtoServer(IPAddress.Loopback, 0)
    {
        protected override ProtoSession CreateProtoSession() => new EchoSession(this);
    }

    private sealed class EchoClient(EndPoint endpoint) : ProtoClient(endpoint)
    {
        private readonly MessageEnvelope _request = new() { Header = "echo" };
        private TaskCompletionSource? _done;
        private int _toSend;
        private int _toReceive;

        public Task RunAsync(int echoes, int window)
        {
            _done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            _toSend = echoes - window;
            _toReceive = echoes;
            var ping = new Ping { Sequence = 123_456, Data = new byte[26] };
            for (var i = 0; i < window; i++)
                SendAsync(_request, ping);
            return _done.Task;
        }

        protected override void OnMessage(in ProtoMessage message)
        {
            var ping = message.Unpack<Ping>();
            if (Interlocked.Decrement(ref _toSend) >= 0)
                SendAsync(_request, ping);
            if (Interlocked.Decrement(ref _toReceive) == 0)
                _done!.TrySetResult();
        }
    }
}

/// <summary>Runs alone, after the parallel tests: the echo measures the allocations of the whole process.</summary>
[CollectionDefinition(nameof(AllocationCollection), DisableParallelization = true)]
public sealed class AllocationCollection
{
}
