using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using NetServer.Tests.Streams;
using Xunit;

namespace NetServer.Tests.Messaging;

/// <summary>Many threads sending on one connection, each with every kind of send, and multicast: every message whole, each thread's in order.</summary>
[Collection("Messaging over sockets")]
public sealed class MessageConcurrencyTests
{
    private const int Senders = 8;
    private const int PerSender = 250;

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Eight_threads_sending_on_a_client_deliver_every_message_whole_and_in_order(TransportKind kind)
    {
        var checker = new OrderChecker(Senders * PerSender);
        using var server = TestMessageServer.Create(kind, s => new DelegateSession(s) { Message = (_, message) => checker.Check(message) });
        Assert.True(server.Start());
        using var client = server.CreateClient();
        client.Transport.OptionSendBufferLimit = 0; // the non-waiting sends must not be refused here
        Assert.True(await client.ConnectAsync().WaitAsync(Wait.Default));

        await RunSendersAsync(client);
        Assert.True(await checker.Done.WaitAsync(Wait.Default), "a sender's messages are missing");
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Eight_threads_sending_on_a_session_deliver_every_message_whole_and_in_order(TransportKind kind)
    {
        var connected = new TaskCompletionSource<MessageSession>(TaskCreationOptions.RunContinuationsAsynchronously);
        using var server = TestMessageServer.Create(kind, s => new DelegateSession(s)
        {
            Attached = session => session.Connection!.OptionSendBufferLimit = 0,
            Connected = session => connected.TrySetResult(session),
        });
        Assert.True(server.Start());
        using var client = server.CreateClient();
        Assert.True(await client.ConnectAsync().WaitAsync(Wait.Default));
        var session = await connected.Task.WaitAsync(Wait.Default);

        var checker = new OrderChecker(Senders * PerSender);
        var reading = Task.Run(async () =>
        {
            await foreach (var message in client.ReceiveAllAsync())
            {
                using (message)
                    checker.Check(message.Span);
                if (checker.Done.IsCompleted)
                    return;
            }
        });

        await RunSendersAsync(session);
        Assert.True(await checker.Done.WaitAsync(Wait.Default), "a sender's messages are missing");
        await reading.WaitAsync(Wait.Default);
    }

    [Theory]
    [MemberData(nameof(Transports.All), MemberType = typeof(Transports))]
    public async Task Multicast_reaches_every_client_whole_while_a_bad_sender_is_thrown_out(TransportKind kind)
    {
        var ready = 0;
        var protocolErrors = 0;
        using var server = TestMessageServer.Create(kind, s => new DelegateSession(s)
        {
            Connected = _ => Interlocked.Increment(ref ready),
            Ended = (_, why) =>
            {
                if (why == DisconnectReason.ProtocolError)
                    Interlocked.Increment(ref protocolErrors);
            },
        });
        Assert.True(server.Start());
        var clients = new List<MessageClient>();
        try
        {
            for (var i = 0; i < 3; i++)
            {
                var client = server.CreateClient();
                clients.Add(client);
                Assert.True(await client.ConnectAsync().WaitAsync(Wait.Default));
            }

            using var bad = await server.ConnectRawAsync();
            await Wait.UntilAsync(() => Volatile.Read(ref ready) == 4, "every session to be ready");

            int[] sizes = [0, 16, 1024, 1025, 5000, 70_000, 3, 200_000, 1];
            for (var i = 0; i < sizes.Length; i++)
            {
                Assert.True(server.Multicast(TaggedPayloadOrEmpty(i, sizes[i])));
                if (i == 3)
                    await bad.SendAsync(new byte[] { 0, 0, 0, 0x80 }, System.Net.Sockets.SocketFlags.None); // int.MinValue
            }

            await MessageFramingTests.AssertClosedAsync(bad, multicastsAllowed: true);
            foreach (var client in clients)
            {
                for (var i = 0; i < sizes.Length; i++)
                {
                    using var message = await client.ReceiveAsync().AsTask().WaitAsync(Wait.Default);
                    Assert.Equal(TaggedPayloadOrEmpty(i, sizes[i]), message.ToArray());
                }

                Assert.True(client.IsConnected);
            }

            await Wait.UntilAsync(() => Volatile.Read(ref protocolErrors) == 1, "the bad sender's session to end with ProtocolError");
            Assert.Equal(3, server.ConnectedSessions);
        }
        finally
        {
            foreach (var client in clients)
                client.Dispose();
        }
    }

    private static byte[] TaggedPayloadOrEmpty(int sequence, int size) =>
        size < TaggedPayload.MinLength ? Framing.Pattern(sequence, size) : TaggedPayload.Create(99, sequence, size);

    /// <summary>Runs the senders on threads of their own, each sending <see cref="PerSender"/> messages with every kind of send in turn.</summary>
    private static async Task RunSendersAsync(MessageProtocol connection)
    {
        using var start = new Barrier(Senders);
        var senders = new Task[Senders];
        for (var s = 0; s < Senders; s++)
        {
            var sender = s;
            senders[s] = Task.Factory.StartNew(
                () =>
                {
                    start.SignalAndWait(Wait.Default);
                    return SendAllAsync(connection, sender);
                },
                CancellationToken.None,
                TaskCreationOptions.LongRunning,
                TaskScheduler.Default).Unwrap();
        }

        await Task.WhenAll(senders).WaitAsync(Wait.Default);
    }

    private static async Task SendAllAsync(MessageProtocol connection, int sender)
    {
        var random = new Random(sender);
        for (var sequence = 0; sequence < PerSender; sequence++)
        {
            switch (sequence % 5)
            {
                case 0: // small, framed on the stack
                    Assert.True(connection.SendAsync(TaggedPayload.Create(sender, sequence, random.Next(8, 300)).AsSpan()));
                    break;
                case 1: // over 1 KiB, through the writer
                    Assert.True(connection.SendAsync(TaggedPayload.Create(sender, sequence, random.Next(1025, 6000)).AsSpan()));
                    break;
                case 2: // built in place in three steps
                {
                    var payload = TaggedPayload.Create(sender, sequence, random.Next(8, 4000));
                    using var writer = connection.StartMessage();
                    var cut = random.Next(0, payload.Length);
                    payload.AsSpan(0, cut).CopyTo(writer.GetSpan(cut));
                    writer.Advance(cut);
                    writer.Write(payload.AsSpan(cut, (payload.Length - cut) / 2));
                    var rest = payload.AsSpan(cut + ((payload.Length - cut) / 2));
                    rest.CopyTo(writer.GetMemory(rest.Length).Span);
                    writer.Advance(rest.Length);
                    Assert.True(writer.Commit());
                    break;
                }

                case 3: // several parts as one message
                {
                    var payload = TaggedPayload.Create(sender, sequence, random.Next(8, 3000));
                    var cut = random.Next(0, payload.Length);
                    Assert.True(connection.SendAsync(Segments.Of(payload.AsMemory(0, cut), payload.AsMemory(cut))));
                    break;
                }

                default: // awaited
                    Assert.True(await connection.SendAsync(TaggedPayload.Create(sender, sequence, random.Next(8, 2500)).AsMemory(), CancellationToken.None));
                    break;
            }
        }
    }

    /// <summary>Checks each message's integrity and that every sender's messages come in order; completes when all came.</summary>
    private sealed class OrderChecker(int expected)
    {
        private readonly ConcurrentDictionary<int, int> _next = new();
        private readonly TaskCompletionSource<bool> _done = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private int _count;

        public Task<bool> Done => _done.Task;

        public void Check(ReadOnlySpan<byte> message)
        {
            var error = TaggedPayload.Verify(message, out var sender, out var sequence);
            if (error is null && (sender is < 0 or >= Senders || _next.GetOrAdd(sender, 0) != sequence))
                error = $"sender {sender}'s message {sequence} came when {_next.GetValueOrDefault(sender)} was next";
            if (error is not null)
            {
                _done.TrySetException(new Xunit.Sdk.XunitException(error));
                return;
            }

            _next[sender] = sequence + 1;
            if (Interlocked.Increment(ref _count) == expected)
                _done.TrySetResult(_next.Values.All(next => next == PerSender));
        }
    }
}
