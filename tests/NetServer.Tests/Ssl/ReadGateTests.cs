using NetServer.Tls;
using System;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Ssl;

/// <summary>
/// The gate that keeps a TLS shutdown away from decryption (<see cref="ReadGate"/>, with the
/// <see cref="GatedStream"/> under the SslStream), on a real socket: work runs at once while the
/// layer's read waits for bytes or no read is under way, waits while a read may be decrypting
/// (runs when it parks or ends), and bytes that arrive while the work runs go up only after it.
/// </summary>
public sealed class ReadGateTests : IDisposable
{
    private static readonly Action<object> s_record = static state => ((Ran)state).Record();

    private readonly Socket _ours;
    private readonly Socket _peer;
    private readonly ReadGate _gate = new();
    private readonly GatedStream _stream;

    public ReadGateTests()
    {
        using var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        listener.Listen(1);
        _peer = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        _peer.Connect(listener.LocalEndPoint!);
        _ours = listener.Accept();
        _stream = new GatedStream(new NetworkStream(_ours, ownsSocket: true), _gate);
    }

    public void Dispose()
    {
        _stream.Dispose();
        _peer.Dispose();
    }

    [Fact]
    public async Task Work_runs_at_once_while_no_read_is_under_way_or_the_read_waits_for_bytes()
    {
        var ran = new Ran();
        _gate.Run(s_record, ran);
        Assert.Equal(Environment.CurrentManagedThreadId, ran.Thread);

        _gate.EnterRead();
        var read = _stream.ReadAsync(new byte[16]).AsTask();
        Assert.False(read.IsCompleted);
        var parked = new Ran();
        _gate.Run(s_record, parked);
        Assert.Equal(Environment.CurrentManagedThreadId, parked.Thread);

        _peer.Send(new byte[5]);
        Assert.Equal(5, await read.WaitAsync(Wait.Default));
        _gate.ExitRead();
    }

    [Fact]
    public async Task Work_waits_while_a_read_may_decrypt_and_runs_when_it_parks_or_ends()
    {
        // Under way and not in the transport (decrypting, or about to reach the transport): wait.
        _gate.EnterRead();
        var atEnd = new Ran();
        _gate.Run(s_record, atEnd);
        Assert.False(atEnd.HasRun);
        _gate.ExitRead();
        Assert.True(atEnd.HasRun);

        _gate.EnterRead();
        var atPark = new Ran();
        _gate.Run(s_record, atPark);
        Assert.False(atPark.HasRun);
        var read = _stream.ReadAsync(new byte[16]).AsTask(); // parks: the work runs before the transport read starts
        Assert.True(atPark.HasRun);
        Assert.False(read.IsCompleted);
        _peer.Send(new byte[7]);
        Assert.Equal(7, await read.WaitAsync(Wait.Default));
        _gate.ExitRead();
    }

    [Fact]
    public async Task A_read_that_starts_while_the_work_runs_waits_for_it()
    {
        // A layer read can decrypt records it already holds without reaching the transport (so
        // without parking): it must not start while the work (the TLS shutdown) runs.
        using var working = new ManualResetEventSlim();
        using var release = new ManualResetEventSlim();
        var work = HarnessExtensions.RunBlocking(() =>
        {
            _gate.Run(_ =>
            {
                working.Set();
                release.Wait(Wait.Default);
            }, this);
            return true;
        });
        Assert.True(working.Wait(Wait.Default));

        var entered = HarnessExtensions.RunBlocking(() =>
        {
            _gate.EnterRead();
            return release.IsSet;
        });
        await Task.Delay(200);
        Assert.False(entered.IsCompleted, "A read entered while the work ran.");
        release.Set();
        Assert.True(await entered.WaitAsync(Wait.Default), "The read entered before the work was done.");
        Assert.True(await work.WaitAsync(Wait.Default));
        _gate.ExitRead();
    }

    [Fact]
    public async Task Bytes_that_arrive_while_the_work_runs_go_up_only_after_it()
    {
        _gate.EnterRead();
        var buffer = new byte[16];
        var read = _stream.ReadAsync(buffer).AsTask();
        using var release = new ManualResetEventSlim();
        var entered = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);

        // The work holds the gate until released, on a thread of its own.
        var working = HarnessExtensions.RunBlocking(() =>
        {
            _gate.Run(_ =>
            {
                entered.TrySetResult();
                release.Wait(Wait.Default);
            }, this);
            return true;
        });
        await entered.Task.WaitAsync(Wait.Default);

        // The transport read takes the bytes (they leave the socket) but cannot hand them up yet.
        _peer.Send([1, 2, 3]);
        await Wait.UntilAsync(() => _ours.Available == 0, "the transport read to take the bytes");
        await Task.Delay(100);
        Assert.False(read.IsCompleted, "The bytes went up to be decrypted while the work ran.");

        release.Set();
        Assert.True(await working.WaitAsync(Wait.Default));
        Assert.Equal(3, await read.WaitAsync(Wait.Default));
        Assert.Equal([1, 2, 3], buffer[..3]);
        _gate.ExitRead();
    }

    /// <summary>Where and whether a piece of work ran.</summary>
    private sealed class Ran
    {
        public int Thread { get; private set; } = -1;

        public bool HasRun => Thread != -1;

        public void Record() => Thread = Environment.CurrentManagedThreadId;
    }
}
