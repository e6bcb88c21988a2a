using System;
using System.Linq;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Tcp;

/// <summary>
/// Crossing a limit has its documented outcome: OptionSendBufferLimit refuses the non-waiting send
/// (false, OnError NoBufferSpaceAvailable, nothing queued, the connection stays up) and parks the
/// awaitable one; OptionReceiveBufferLimit caps what one OnReceived is handed.
/// </summary>
public class LimitsTests
{
    private const int SendLimit = 64 * 1024;
    private const int ReceiveLimit = 1000;
    private const int Chunk = 16 * 1024;

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task SendAsync_past_the_limit_returns_false_reports_NoBufferSpaceAvailable_and_queues_nothing(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        Assert.True(harness.Start());
        var (peer, session, probe) = await harness.ConnectPeerAsync();
        using (peer)
        {
            session.OptionSendBufferLimit = SendLimit;
            var position = await HarnessExtensions.FillToTheLimitAsync(session, 0, Chunk);
            Assert.True(session.BytesPending <= SendLimit, $"{session.BytesPending} bytes queued past a limit of {SendLimit}.");
            var pending = session.BytesPending;

            // Every overload refuses the next chunk (the bytes it would have added are the pattern at
            // `position`, so had any of them been queued the peer would see them twice).
            var next = Framing.Pattern(position, Chunk);
            var errorsBefore = CountNoBufferSpace(probe);
            Assert.False(session.SendAsync(next));
            Assert.False(session.SendAsync(next, 0, next.Length));
            Assert.False(session.SendAsync(new ReadOnlySpan<byte>(next)));
            Assert.Equal(errorsBefore + 3, CountNoBufferSpace(probe));
            Assert.Equal(pending, session.BytesPending);
            Assert.True(session.IsConnected);
            Assert.Equal(0, probe.DisconnectedCount);

            // Once the peer reads, the same connection takes the next chunk.
            var reading = Wait.ReadToEndAsync(peer, TimeSpan.FromSeconds(30));
            await Wait.UntilAsync(() => session.BytesPending == 0, "the queue to drain");
            Assert.True(session.SendAsync(next));
            Assert.True(await HarnessExtensions.RunBlocking(session.Disconnect).WaitAsync(Wait.Default));
            Assert.Equal(DisconnectReason.LocalDisconnect, await probe.DisconnectedSignal.Task.WaitAsync(Wait.Default));

            var received = await reading;
            Assert.Equal(position + Chunk, received.Length);
            Assert.Equal(-1, Framing.FindPatternMismatch(received, 0));
        }
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task A_message_larger_than_the_limit_is_accepted_into_an_empty_queue(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        Assert.True(harness.Start());
        var (peer, session, _) = await harness.ConnectPeerAsync();
        using (peer)
        {
            session.OptionSendBufferLimit = SendLimit;
            var big = Framing.Pattern(0, 4 * SendLimit);
            Assert.True(session.SendAsync(big));
            Assert.Equal(big, await Wait.ReadExactlyAsync(peer, big.Length));
        }
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Awaitable_SendAsync_waits_for_room_then_completes_in_arrival_order(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        Assert.True(harness.Start());
        var (peer, session, probe) = await harness.ConnectPeerAsync();
        using (peer)
        {
            session.OptionSendBufferLimit = SendLimit;
            var position = await HarnessExtensions.FillToTheLimitAsync(session, 0, Chunk);
            var pending = session.BytesPending;
            var errorsBefore = CountNoBufferSpace(probe);

            var first = Framing.Pattern(position, 40 * 1024);
            var second = Framing.Pattern(position + first.Length, 40 * 1024);
            var firstSend = session.SendAsync(first.AsMemory()).AsTask();
            var secondSend = session.SendAsync(second.AsMemory()).AsTask();
            await Task.Delay(200);
            Assert.False(firstSend.IsCompleted, "The awaitable send completed although the queue had no room.");
            Assert.False(secondSend.IsCompleted, "The awaitable send completed although the queue had no room.");
            Assert.Equal(pending, session.BytesPending);
            Assert.Equal(errorsBefore, CountNoBufferSpace(probe)); // waiting is not an error

            // Room frees up as the peer reads: both complete, and the bytes arrive in the order the sends were made.
            var reading = Wait.ReadToEndAsync(peer, TimeSpan.FromSeconds(30));
            Assert.True(await firstSend.WaitAsync(Wait.Default));
            Assert.True(await secondSend.WaitAsync(Wait.Default));
            Assert.True(await HarnessExtensions.RunBlocking(session.Disconnect).WaitAsync(Wait.Default));

            var received = await reading;
            Assert.Equal(position + first.Length + second.Length, received.Length);
            Assert.Equal(-1, Framing.FindPatternMismatch(received, 0));
        }
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Awaitable_SendAsync_cancelled_while_waiting_throws_and_queues_nothing(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        Assert.True(harness.Start());
        var (peer, session, probe) = await harness.ConnectPeerAsync();
        using (peer)
        {
            session.OptionSendBufferLimit = SendLimit;
            var position = await HarnessExtensions.FillToTheLimitAsync(session, 0, Chunk);
            var pending = session.BytesPending;

            // A token that has already fired: nothing is even tried.
            var next = Framing.Pattern(position, 40 * 1024);
            await Assert.ThrowsAnyAsync<OperationCanceledException>(() => session.SendAsync(next.AsMemory(), new CancellationToken(true)).AsTask());

            // A token that fires while the send waits for room.
            using var cts = new CancellationTokenSource();
            var waiting = session.SendAsync(next.AsMemory(), cts.Token).AsTask();
            await Task.Delay(100);
            Assert.False(waiting.IsCompleted, "The awaitable send completed although the queue had no room.");
            cts.Cancel();
            await Assert.ThrowsAnyAsync<OperationCanceledException>(() => waiting.WaitAsync(Wait.Default));
            Assert.Equal(pending, session.BytesPending);
            Assert.True(session.IsConnected);

            // The same bytes sent again go out once: had the cancelled send been queued too, they would arrive twice.
            var reading = Wait.ReadToEndAsync(peer, TimeSpan.FromSeconds(30));
            Assert.True(await session.SendAsync(next.AsMemory()).AsTask().WaitAsync(Wait.Default));
            Assert.True(await HarnessExtensions.RunBlocking(session.Disconnect).WaitAsync(Wait.Default));
            Assert.Equal(DisconnectReason.LocalDisconnect, await probe.DisconnectedSignal.Task.WaitAsync(Wait.Default));

            var received = await reading;
            Assert.Equal(position + next.Length, received.Length);
            Assert.Equal(-1, Framing.FindPatternMismatch(received, 0));
        }
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Session_receive_limit_caps_each_OnReceived_and_every_byte_arrives(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        var checker = new ChunkChecker();
        harness.Probe.ConfigureSession = probe =>
        {
            probe.Connected = session => session.OptionReceiveBufferLimit = ReceiveLimit;
            probe.Received = (_, buffer, offset, size) => checker.Check(buffer, offset, size);
        };
        Assert.True(harness.Start());
        var (peer, _, _) = await harness.ConnectPeerAsync();
        using (peer)
        {
            const int total = 1024 * 1024;
            var data = Framing.Pattern(0, total);
            await peer.SendAsync(data, SocketFlags.None).WaitAsync(Wait.Default);
            await Wait.UntilAsync(() => checker.Checked == total, "every byte to arrive");
            checker.AssertClean(total);
        }
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Client_receive_limit_caps_each_OnReceived_and_every_byte_arrives(TransportKind kind)
    {
        await using var harness = new ServerHarness(kind);
        Assert.True(harness.Start());

        var checker = new ChunkChecker();
        var probe = new Probe { Received = (_, buffer, offset, size) => checker.Check(buffer, offset, size) };
        using var client = harness.CreateClient(probe);
        client.OptionReceiveBufferLimit = ReceiveLimit;
        Assert.True(await client.ConnectAsync(CancellationToken.None).WaitAsync(Wait.Default));
        await harness.Probe.WaitForSessionsAsync(1);
        var session = harness.FindSession(harness.Probe.Sessions.Keys.Single())!;

        const int total = 1024 * 1024;
        session.OptionSendBufferLimit = 0;
        Assert.True(session.SendAsync(Framing.Pattern(0, total)));
        await Wait.UntilAsync(() => checker.Checked == total, "every byte to arrive");
        checker.AssertClean(total);
    }

    private static int CountNoBufferSpace(Probe probe) => probe.Events.Count(e => e == "error:" + SocketError.NoBufferSpaceAvailable);

    /// <summary>Records the largest OnReceived and checks the bytes against the pattern.</summary>
    private sealed class ChunkChecker
    {
        private long _position;
        private long _checked;
        private long _largest;
        private int _calls;
        private string? _error;

        public void Check(byte[] buffer, long offset, long size)
        {
            _largest = Math.Max(_largest, size);
            _calls++;
            if (_error is null && Framing.FindPatternMismatch(buffer.AsSpan((int)offset, (int)size), _position) is var bad and >= 0)
                _error = $"Byte {_position + bad} is wrong.";
            _position += size;
            Interlocked.Add(ref _checked, size);
        }

        /// <summary>Bytes checked so far (updated after each check, so waiting on it waits for the check).</summary>
        public long Checked => Interlocked.Read(ref _checked);

        public void AssertClean(long total)
        {
            Assert.Null(_error);
            Assert.Equal(total, _position);
            Assert.True(_largest <= ReceiveLimit, $"OnReceived was handed {_largest} bytes at once, past the limit of {ReceiveLimit}.");
            Assert.True(_calls >= total / ReceiveLimit, $"Only {_calls} OnReceived calls for {total} bytes.");
        }
    }
}
