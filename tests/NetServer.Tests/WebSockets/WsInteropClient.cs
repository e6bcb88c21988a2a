using System;
using System.Collections.Concurrent;
using System.Net;
using System.Net.WebSockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;

namespace NetServer.Tests.WebSockets;

/// <summary>
/// Our client as the interop tests drive it: WsClient (TCP) or WssClient (TLS, trusting the test
/// CA), messages awaited with ReceiveMessageAsync, the close and pong hooks recorded. With
/// <see cref="FillRequestByHand"/> it writes its upgrade request in OnWsConnecting(HttpRequest) the
/// way NetCoreServer's benchmark clients do.
/// </summary>
internal sealed class WsInteropClient : IDisposable
{
    private readonly IClient _client;

    public WsInteropClient(bool secure, int port)
    {
        var endpoint = new IPEndPoint(IPAddress.Loopback, port);
        _client = secure ? new SecureClient(this, endpoint) : (IClient)new PlainClient(this, endpoint);
    }

    /// <summary>The path of the upgrade request (our client's default request otherwise).</summary>
    public string Path { get; init; } = "/";

    /// <summary>Writes the upgrade request by hand: SetBegin, Host, Origin, Upgrade, Connection, the key from WsNonce, "chat, superchat", version 13, SetBody().</summary>
    public bool FillRequestByHand { get; init; }

    public WsOptions WsOptions => _client.WsOptions;

    /// <summary>The first close frame received: status and reason.</summary>
    public TaskCompletionSource<(int Status, string Reason)> Closed { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

    /// <summary>Each pong payload received, as text.</summary>
    public ConcurrentQueue<string> Pongs { get; } = new();

    /// <summary>Each OnWsError.</summary>
    public ConcurrentQueue<string> Errors { get; } = new();

    public string? WsSubProtocol => _client.WsSubProtocol;

    public bool IsWsCompressed => _client.IsWsCompressed;

    public bool IsConnected => _client.IsConnected;

    public DisconnectReason DisconnectReason => _client.DisconnectReason;

    public long BytesSent => _client.BytesSent;

    public long BytesReceived => _client.BytesReceived;

    public Task<bool> ConnectAsync() => _client.ConnectAsync(CancellationToken.None).WaitAsync(WsInteropPeers.Timeout);

    public Task<bool> SendAsync(byte[] payload, WebSocketMessageType type, bool endOfMessage = true) =>
        _client.SendMessageAsync(payload, type, endOfMessage).AsTask().WaitAsync(WsInteropPeers.Timeout);

    public Task<bool> SendAsync(string text) => SendAsync(Encoding.UTF8.GetBytes(text), WebSocketMessageType.Text);

    public Task<ReceivedMessage> ReceiveAsync() => _client.ReceiveMessageAsync().AsTask().WaitAsync(WsInteropPeers.Timeout);

    /// <summary>The next message, which must be text.</summary>
    public async Task<string> ReceiveTextAsync()
    {
        using var message = await ReceiveAsync();
        Xunit.Assert.True(message.IsText, $"A binary message of {message.Length} bytes came where text was expected.");
        return message.Text;
    }

    public bool SendPingAsync(string text) => _client.SendPingAsync(text);

    public bool Close(int status, string reason) => _client.Close(status, reason);

    /// <summary>Waits (bounded) until the connection is closed.</summary>
    public Task DisconnectedAsync() => Wait.UntilAsync(() => !_client.IsConnected, "the client to disconnect", WsInteropPeers.Timeout);

    public void Dispose() => _client.Dispose();

    private void FillRequest(HttpRequest request, byte[] nonce)
    {
        if (!FillRequestByHand)
        {
            if (Path != "/")
                request.SetBegin("GET", Path);
            return;
        }

        request.SetBegin("GET", Path);
        request.SetHeader("Host", "localhost");
        request.SetHeader("Origin", "http://localhost");
        request.SetHeader("Upgrade", "websocket");
        request.SetHeader("Connection", "Upgrade");
        request.SetHeader("Sec-WebSocket-Key", Convert.ToBase64String(nonce));
        request.SetHeader("Sec-WebSocket-Protocol", "chat, superchat");
        request.SetHeader("Sec-WebSocket-Version", "13");
        request.SetBody();
    }

    /// <summary>What WsClient and WssClient have in common here.</summary>
    private interface IClient : IDisposable
    {
        WsOptions WsOptions { get; }

        string? WsSubProtocol { get; }

        bool IsWsCompressed { get; }

        bool IsConnected { get; }

        DisconnectReason DisconnectReason { get; }

        long BytesSent { get; }

        long BytesReceived { get; }

        Task<bool> ConnectAsync(CancellationToken cancellationToken);

        ValueTask<bool> SendMessageAsync(ReadOnlyMemory<byte> payload, WebSocketMessageType type = WebSocketMessageType.Binary, bool endOfMessage = true, CancellationToken cancellationToken = default);

        ValueTask<ReceivedMessage> ReceiveMessageAsync(CancellationToken cancellationToken = default);

        bool SendPingAsync(string text);

        bool Close(int status, string text);
    }

    private sealed class PlainClient(WsInteropClient owner, IPEndPoint endpoint) : WsClient(endpoint), IClient
    {
        public override void OnWsConnecting(HttpRequest request) => owner.FillRequest(request, WsNonce);

        public override void OnWsClose(byte[] buffer, long offset, long size, int status = WsCloseStatus.Normal) =>
            owner.Closed.TrySetResult((status, Encoding.UTF8.GetString(buffer, (int)offset, (int)size)));

        public override void OnWsPong(byte[] buffer, long offset, long size) => owner.Pongs.Enqueue(Encoding.UTF8.GetString(buffer, (int)offset, (int)size));

        public override void OnWsError(string error) => owner.Errors.Enqueue(error);
    }

    private sealed class SecureClient(WsInteropClient owner, IPEndPoint endpoint) : WssClient(TestCertificates.ClientContext(), endpoint), IClient
    {
        public override void OnWsConnecting(HttpRequest request) => owner.FillRequest(request, WsNonce);

        public override void OnWsClose(byte[] buffer, long offset, long size, int status = WsCloseStatus.Normal) =>
            owner.Closed.TrySetResult((status, Encoding.UTF8.GetString(buffer, (int)offset, (int)size)));

        public override void OnWsPong(byte[] buffer, long offset, long size) => owner.Pongs.Enqueue(Encoding.UTF8.GetString(buffer, (int)offset, (int)size));

        public override void OnWsError(string error) => owner.Errors.Enqueue(error);
    }
}
