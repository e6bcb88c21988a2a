using System;
using System.IO;
using System.Net;
using System.Net.Sockets;
using System.Threading.Tasks;
using NetServer.Messaging;
using NetServer.Tests.Infrastructure;

namespace NetServer.Tests.Messaging;

/// <summary>A message server whose sessions come from a delegate, on any transport of the harness.</summary>
public sealed class TestMessageServer : MessageServer
{
    private readonly Func<MessageServer, MessageSession> _factory;

    private TestMessageServer(EndPoint endpoint, Func<MessageServer, MessageSession> factory)
        : base(endpoint) => _factory = factory;

    private TestMessageServer(Func<IProtocolHostOwner, IProtocolHost> host, Func<MessageServer, MessageSession> factory)
        : base(host) => _factory = factory;

    public TransportKind Kind { get; private init; }

    public string? SocketPath { get; private init; }

    public static TestMessageServer Create(TransportKind kind, Func<MessageServer, MessageSession> factory)
    {
        var loopback = new IPEndPoint(IPAddress.Loopback, 0);
        return kind switch
        {
            TransportKind.Tcp => new TestMessageServer(loopback, factory) { Kind = kind },
            TransportKind.Ssl => new TestMessageServer(SecureTransport.MessageHost(loopback), factory) { Kind = kind },
            _ => CreateUds(factory),
        };
    }

    /// <summary>A client of this server over its transport.</summary>
    public MessageClient CreateClient() => Kind switch
    {
        TransportKind.Tcp => new MessageClient(Endpoint),
        TransportKind.Ssl => SecureTransport.CreateMessageClient(Endpoint),
        _ => new MessageClient(new UnixDomainSocketEndPoint(SocketPath!)),
    };

    /// <summary>A raw socket to this server (over TLS through the harness's relay, which passes plaintext).</summary>
    public async Task<Socket> ConnectRawAsync()
    {
        if (Kind == TransportKind.Ssl)
            return await SecureTransport.ConnectRelayAsync((IPEndPoint)Endpoint);
        var socket = Kind == TransportKind.Tcp
            ? new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true }
            : new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified);
        await socket.ConnectAsync(Kind == TransportKind.Tcp ? Endpoint : new UnixDomainSocketEndPoint(SocketPath!)).WaitAsync(Wait.Default);
        return socket;
    }

    protected override MessageSession CreateSession() => _factory(this);

    protected override void Dispose(bool disposing)
    {
        base.Dispose(disposing);
        if (SocketPath is not null)
            File.Delete(SocketPath);
    }

    private static TestMessageServer CreateUds(Func<MessageServer, MessageSession> factory)
    {
        var path = Path.Combine(Path.GetTempPath(), $"ns-msg-{Guid.NewGuid():N}.sock");
        return new TestMessageServer(new UnixDomainSocketEndPoint(path), factory) { Kind = TransportKind.Uds, SocketPath = path };
    }
}

/// <summary>A session that runs delegates: a test's server side.</summary>
public sealed class DelegateSession(MessageServer server) : MessageSession(server)
{
    public Action<DelegateSession, byte[]>? Message { get; init; }

    public Action<DelegateSession>? Connected { get; init; }

    public Action<DelegateSession, DisconnectReason>? Ended { get; init; }

    public Action<DelegateSession>? Attached { get; init; }

    protected override void OnMessage(ReadOnlySpan<byte> message) => Message?.Invoke(this, message.ToArray());

    protected internal override void OnAttached() => Attached?.Invoke(this);

    protected internal override void OnConnected() => Connected?.Invoke(this);

    protected internal override void OnDisconnected(DisconnectReason reason)
    {
        base.OnDisconnected(reason);
        Ended?.Invoke(this, reason);
    }
}

/// <summary>A session that echoes every message from the span it got, without a copy of its own.</summary>
public sealed class EchoMessageSession(MessageServer server) : MessageSession(server)
{
    protected override void OnMessage(ReadOnlySpan<byte> message) => SendAsync(message);
}

/// <summary>
/// Message payloads that say who sent them: sender id and sequence number (two int32), then a
/// filler that depends on both (<see cref="Framing.FillerByte"/>), so a torn, mixed or reordered
/// message shows up when checked.
/// </summary>
internal static class TaggedPayload
{
    public const int MinLength = Framing.MinPayload;

    public static byte[] Create(int sender, int sequence, int length)
    {
        var payload = new byte[length];
        Fill(payload, sender, sequence);
        return payload;
    }

    public static void Fill(Span<byte> payload, int sender, int sequence)
    {
        System.Buffers.Binary.BinaryPrimitives.WriteInt32LittleEndian(payload, sender);
        System.Buffers.Binary.BinaryPrimitives.WriteInt32LittleEndian(payload[4..], sequence);
        for (var i = MinLength; i < payload.Length; i++)
            payload[i] = Framing.FillerByte(sender, sequence, i - MinLength);
    }

    /// <summary>Null when <paramref name="payload"/> is intact, else what is wrong with it.</summary>
    public static string? Verify(ReadOnlySpan<byte> payload, out int sender, out int sequence)
    {
        sender = sequence = -1;
        if (payload.Length < MinLength)
            return $"a message of {payload.Length} bytes, shorter than its tag";
        sender = System.Buffers.Binary.BinaryPrimitives.ReadInt32LittleEndian(payload);
        sequence = System.Buffers.Binary.BinaryPrimitives.ReadInt32LittleEndian(payload[4..]);
        for (var i = MinLength; i < payload.Length; i++)
        {
            if (payload[i] != Framing.FillerByte(sender, sequence, i - MinLength))
                return $"message {sequence} of sender {sender} ({payload.Length} bytes) is corrupted at byte {i}";
        }

        return null;
    }
}
