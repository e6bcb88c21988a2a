using System;
using System.Net;
using System.Net.Sockets;
using Microsoft.Extensions.Logging;
using Xunit;

namespace NetServer.Hosting.Tests;

public sealed class NetServerLoggerTests
{
    /// <summary>A logger with every level off that fails the test if anything is written to it anyway.</summary>
    private sealed class DisabledLogger : ILogger
    {
        public IDisposable? BeginScope<TState>(TState state)
            where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) => false;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter) =>
            throw new InvalidOperationException($"Event {eventId} was written to a logger with every level off.");
    }

    [Fact]
    public void DisabledLevels_WriteNothing_AndAllocateNothing()
    {
        var listener = new NetServerLogger(new DisabledLogger(), "test");
        var remote = new IPEndPoint(IPAddress.Loopback, 0);
        var id = Guid.NewGuid();
        void EveryEvent()
        {
            listener.Listening(this, remote);
            listener.Stopped(this, remote);
            listener.AcceptRefused(this, remote, 10);
            listener.ConnectionClosed(this, id, remote, DisconnectReason.PeerClosed, SocketError.Success);
            listener.ProtocolError(this, id, remote, "HTTP", "bad");
            listener.TlsHandshakeFailed(this, id, remote, "bad");
            listener.SendPaused(this, id, remote, 100);
            listener.MulticastDisconnect(this, id, remote, 100);
        }

        EveryEvent(); // JIT first
        var before = GC.GetAllocatedBytesForCurrentThread();
        for (var i = 0; i < 1000; i++)
            EveryEvent();
        Assert.Equal(0, GC.GetAllocatedBytesForCurrentThread() - before);
    }
}
