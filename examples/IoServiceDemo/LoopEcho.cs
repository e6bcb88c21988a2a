using System.Net;
using System.Threading;
using System.Threading.Tasks;

namespace NetServer.Examples.IoServiceDemo;

/// <summary>An echo server whose sessions run on the loops of the service it is given.</summary>
internal sealed class LoopEchoServer(IPAddress address, int port) : TcpServer(address, port)
{
    /// <summary>The thread the last OnReceived of a session ran on.</summary>
    public string? HookThread { get; set; }

    protected override TcpSession CreateSession() => new LoopEchoSession(this);
}

internal sealed class LoopEchoSession(LoopEchoServer server) : TcpSession(server)
{
    protected override void OnReceived(byte[] buffer, long offset, long size)
    {
        server.HookThread = Thread.CurrentThread.Name;
        SendAsync(buffer, offset, size); // sent from the loop thread, no hop
    }
}

/// <summary>A client on the same service: completes <see cref="Echoed"/> with the first reply and the thread it arrived on.</summary>
internal sealed class LoopEchoClient(IPAddress address, int port) : TcpClient(address, port)
{
    public TaskCompletionSource<(string Text, string? Thread)> Echoed { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

    protected override void OnConnected() => SendAsync("hello loops");

    protected override void OnReceived(byte[] buffer, long offset, long size) =>
        Echoed.TrySetResult((System.Text.Encoding.UTF8.GetString(buffer, (int)offset, (int)size), Thread.CurrentThread.Name));
}
