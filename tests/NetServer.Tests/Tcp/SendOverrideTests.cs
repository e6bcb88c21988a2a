using System;
using System.Collections.Generic;
using System.Net;
using System.Text;
using Xunit;

namespace NetServer.Tests.Tcp;

/// <summary>
/// As in NetCoreServer, the array and text overloads of <c>SendAsync</c> and <c>Send</c> go
/// through the span overload, so an application that overrides the span one (to frame, wrap or
/// cap what it sends) sees every send, whichever overload the caller used.
/// </summary>
public class SendOverrideTests
{
    [Fact]
    public void Every_SendAsync_overload_goes_through_the_span_override()
    {
        using var client = new RecordingClient();
        var bytes = new byte[] { 1, 2, 3, 4, 5 };

        Assert.True(client.SendAsync(bytes));
        Assert.True(client.SendAsync(bytes, 1, 3));
        Assert.True(client.SendAsync("hé"));
        Assert.True(client.SendAsync("ok".AsSpan()));

        Assert.Equal(
            [[1, 2, 3, 4, 5], [2, 3, 4], Encoding.UTF8.GetBytes("hé"), Encoding.UTF8.GetBytes("ok")],
            client.Queued);
    }

    [Fact]
    public void Every_Send_overload_goes_through_the_span_override()
    {
        using var client = new RecordingClient();
        var bytes = new byte[] { 1, 2, 3, 4, 5 };

        Assert.Equal(5, client.Send(bytes));
        Assert.Equal(3, client.Send(bytes, 1, 3));
        Assert.Equal(3, client.Send("hé"));
        Assert.Equal(2, client.Send("ok".AsSpan()));

        Assert.Equal(
            [[1, 2, 3, 4, 5], [2, 3, 4], Encoding.UTF8.GetBytes("hé"), Encoding.UTF8.GetBytes("ok")],
            client.Sent);
    }

    /// <summary>Records what reaches the span overloads; never connected, nothing goes out.</summary>
    private sealed class RecordingClient() : TcpClient(IPAddress.Loopback, 1)
    {
        public List<byte[]> Queued { get; } = [];

        public List<byte[]> Sent { get; } = [];

        public override bool SendAsync(ReadOnlySpan<byte> buffer)
        {
            Queued.Add(buffer.ToArray());
            return true;
        }

        public override long Send(ReadOnlySpan<byte> buffer)
        {
            Sent.Add(buffer.ToArray());
            return buffer.Length;
        }
    }
}
