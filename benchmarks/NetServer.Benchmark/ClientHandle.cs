using System;
using System.Net;
using System.Threading;
using System.Threading.Tasks;

namespace NetServer.Benchmark;

/// <summary>
/// A benchmark client of any transport behind one small surface, for the echo and multicast
/// scenarios: connect, count, and for udp echo the once-a-second refill and the final count of
/// the datagrams still in flight.
/// </summary>
internal abstract partial class ClientHandle : IAsyncDisposable
{
    private ClientHandle(ClientCounters counters) => Counters = counters;

    public ClientCounters Counters { get; }

    /// <summary>Why the client is not connected after <see cref="ConnectAsync"/>; null when it is.</summary>
    public abstract string? Failure { get; }

    /// <summary>Datagrams sent and not (yet) received back; 0 for stream clients.</summary>
    public virtual long InFlight => 0;

    public static ClientHandle Of(StreamClient client, ClientBehavior behavior) => new Stream(client, behavior.Counters);

    public static ClientHandle Of(UdpClient client, DatagramBehavior behavior, IPAddress? group) => new Datagram(client, behavior, group);

    /// <summary>Connects; a refused or failed connection throws, or leaves <see cref="Failure"/> set.</summary>
    public abstract Task ConnectAsync(CancellationToken token);

    /// <summary>Called once a second while the run lasts.</summary>
    public virtual void Tick()
    {
    }

    /// <summary>The run is over: send nothing more, so what is still in flight can be counted home.</summary>
    public virtual void StopSending()
    {
    }

    public abstract ValueTask DisposeAsync();

    private sealed class Stream(StreamClient client, ClientCounters counters) : ClientHandle(counters)
    {
        public override string? Failure => client.IsConnected ? null
            : $"{client.DisconnectReason}{(client.DisconnectException is { } e ? ": " + ErrorText.Describe(e) : "")}";

        public override Task ConnectAsync(CancellationToken token) => client.ConnectAsync(token);

        public override ValueTask DisposeAsync() => client.DisposeAsync();
    }

    private sealed class Datagram(UdpClient client, DatagramBehavior behavior, IPAddress? group) : ClientHandle(behavior.Counters)
    {
        public override string? Failure => client.IsConnected ? null : "the socket could not be opened";

        public override long InFlight => Math.Max(0, Counters.DatagramsSent - Counters.DatagramsReceived);

        public override Task ConnectAsync(CancellationToken token)
        {
            // Opening a datagram socket does not wait for anyone; a failure is reported through OnError.
            if (client.Connect() && group is not null)
                client.JoinMulticastGroup(group);
            return Task.CompletedTask;
        }

        public override void Tick() => behavior.Tick(client);

        public override void StopSending() => behavior.StopSending();

        public override async ValueTask DisposeAsync() => await client.DisposeAsync();
    }
}
