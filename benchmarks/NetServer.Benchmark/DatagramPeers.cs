using System;
using System.Buffers.Binary;
using System.Net;
using System.Net.Sockets;

namespace NetServer.Benchmark;

/// <summary>
/// The udp server of both scenarios. Echo: every datagram goes back to its sender (receiving with
/// OptionAutoReceive, see <see cref="PeerFactory"/>). Multicast: it only sends, to its group.
/// </summary>
internal sealed class BenchUdpServer(IPEndPoint endpoint, bool echo, ServerCounters counters) : UdpServer(endpoint)
{
    protected override void OnReceived(EndPoint endpoint, byte[] buffer, long offset, long size)
    {
        if (echo)
            SendAsync(endpoint, buffer, offset, size);
    }

    protected override void OnError(SocketError error) => Count(counters, error);

    /// <summary>An error of a udp or sudp server: a full send queue drops the datagram, as a full socket buffer would (UDP's loss, not a failure).</summary>
    public static void Count(ServerCounters counters, SocketError error)
    {
        if (error == SocketError.NoBufferSpaceAvailable)
            counters.AddDropped();
        else
            counters.AddError(error);
    }
}

internal sealed class BenchUdpClient(IPEndPoint endpoint, DatagramBehavior behavior) : UdpClient(endpoint)
{
    protected override void OnConnected() => behavior.Connected(this);

    protected override void OnReceived(EndPoint endpoint, byte[] buffer, long offset, long size) => behavior.Received(this, buffer, offset, size);

    protected override void OnError(SocketError error) => behavior.Error(error);
}

/// <summary>
/// The udp client side, with the wire behaviour of echoref's udpclient (../shared/tools/echoref.c).
/// Echo: <c>messages</c> datagrams go out at once; each one received is answered with one datagram
/// of the same size; and once a second every client sends one more, so datagrams lost under
/// overload cannot shrink a client's window to nothing and stall it. What was lost is counted at
/// the end: sent minus received, once the datagrams still in flight had time to come back.
/// Multicast: counts datagrams, and from their numbers (the first 8 bytes, little-endian, when
/// the size allows) how many it should have got.
/// </summary>
internal sealed class DatagramBehavior(bool echo, int messages, byte[] message)
{
    /// <summary>Multicast datagrams carry their number in this many leading bytes.</summary>
    public const int SequenceBytes = sizeof(long);

    private volatile bool _sending = true;

    // Multicast numbering, touched only by the client's receive loop (OnReceived never runs concurrently with itself).
    private long _firstSequence = -1;
    private long _lastSequence = -1;

    public ClientCounters Counters { get; } = new();

    public void Connected(UdpClient client)
    {
        if (!echo)
            return;
        for (var i = 0; i < messages; i++)
            Send(client, message, 0, message.Length);
    }

    public void Received(UdpClient client, byte[] buffer, long offset, long size)
    {
        Counters.AddReceived(size);
        Counters.AddDatagramReceived();
        if (echo)
        {
            if (_sending)
                Send(client, buffer, offset, size);
        }
        else if (size >= SequenceBytes)
        {
            Number(BinaryPrimitives.ReadInt64LittleEndian(buffer.AsSpan((int)offset, SequenceBytes)));
        }
    }

    /// <summary>Once a second: echo sends one more datagram, as echoref's udpclient does.</summary>
    public void Tick(UdpClient client)
    {
        if (!echo || !_sending)
            return;
        Counters.AddRefill();
        Send(client, message, 0, message.Length);
    }

    public void StopSending() => _sending = false;

    public void Error(SocketError error)
    {
        // A send refused by the client's own full queue: the datagram was counted as sent and is lost.
        if (error == SocketError.NoBufferSpaceAvailable)
            return;
        Counters.AddError();
        ErrorText.Print($"client error: {error}");
    }

    private void Send(UdpClient client, byte[] buffer, long offset, long size)
    {
        // Counted first: the echo may be received (on another thread) before SendAsync returns.
        Counters.AddDatagramSent();
        client.SendAsync(buffer, offset, size);
    }

    private void Number(long sequence)
    {
        if (_firstSequence < 0 || sequence < _firstSequence)
            _firstSequence = sequence;
        _lastSequence = Math.Max(_lastSequence, sequence);
        Counters.SetDatagramsExpected(_lastSequence - _firstSequence + 1);
    }
}

/// <summary>
/// The udp figures beyond the seeds' ones, each null where it does not apply: what the clients
/// sent, expected and received over the whole run, what was lost, and the server's totals.
/// </summary>
internal sealed record DatagramFigures
{
    /// <summary>Echo clients: datagrams sent, refills included.</summary>
    public long? Sent { get; init; }

    /// <summary>Multicast clients: datagrams numbered from the first to the last one each client received.</summary>
    public long? Expected { get; init; }

    /// <summary>Clients: datagrams received.</summary>
    public long? Received { get; init; }

    /// <summary>Clients: datagrams that never arrived (echo: sent minus received; multicast: expected minus received).</summary>
    public long? Lost { get; init; }

    /// <summary>Echo clients: datagrams sent by the once-a-second refill.</summary>
    public long? Refills { get; init; }

    /// <summary>The server (when in this process): datagrams received.</summary>
    public long? ServerReceived { get; init; }

    /// <summary>The server: datagrams handed to the system (echoed or multicast).</summary>
    public long? ServerSent { get; init; }

    /// <summary>The server: datagrams its full send queue refused.</summary>
    public long? ServerDropped { get; init; }

    /// <summary>Lost as a share of what should have arrived, in percent.</summary>
    public double? LossPercent => Lost is { } lost && (Sent ?? Expected) is > 0 and var total ? Math.Round(100.0 * lost / total, 3) : null;
}
