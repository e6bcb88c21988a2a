using System;
using System.IO;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Threading.Tasks;
using NetServer.Protobuf;

namespace NetServer.Examples.Proto;

/// <summary>Answers "math/sum" requests at once; "math/slow" ones half a second later, from a copy of the request.</summary>
internal sealed class MathSession(ProtoServer server) : ProtoSession(server)
{
    protected override void OnMessage(in ProtoMessage message)
    {
        if (!message.IsRequest)
            return;
        if (message.HeaderEquals(Routes.Sum))
        {
            // The payload is deserialized straight from the receive buffer, the reply serialized straight into the send buffer.
            var request = message.Unpack<SumRequest>();
            Reply(message, new SumReply { Sum = request.Values.Sum(v => (long)v), Count = request.Values.Count });
        }
        else if (message.HeaderEquals(Routes.Slow))
        {
            var request = message.ToEnvelope(); // the message is valid only during this call: keep a copy
            _ = Task.Delay(500).ContinueWith(_ => Reply(request, new SumReply { Sum = -1 }), TaskScheduler.Default);
        }
    }

    protected override void OnConnected() => Console.WriteLine($"Session {Id} connected from {RemoteEndPoint}");

    protected override void OnDisconnected(DisconnectReason reason)
    {
        base.OnDisconnected(reason);
        Console.WriteLine($"Session {Id} disconnected: {reason}");
    }
}

internal sealed class MathServer(EndPoint endpoint) : ProtoServer(endpoint)
{
    protected override ProtoSession CreateProtoSession() => new MathSession(this);
}

internal static class Program
{
    /// <summary>
    /// ProtoServer [port] [address] | ProtoServer --uds [path]: serves protobuf envelopes on
    /// 127.0.0.1:3333 (or a Unix domain socket) until an empty line or the end of input.
    /// </summary>
    private static int Main(string[] args)
    {
        EndPoint endpoint;
        string? socketPath = null;
        if (args.Length > 0 && args[0] == "--uds")
        {
            socketPath = args.Length > 1 ? args[1] : Path.Combine(Path.GetTempPath(), "netserver-proto.sock");
            if (File.Exists(socketPath))
                File.Delete(socketPath); // left by a server that did not stop cleanly
            endpoint = new UnixDomainSocketEndPoint(socketPath);
        }
        else
        {
            var port = args.Length > 0 ? int.Parse(args[0], System.Globalization.CultureInfo.InvariantCulture) : Routes.DefaultPort;
            endpoint = new IPEndPoint(args.Length > 1 ? IPAddress.Parse(args[1]) : IPAddress.Loopback, port);
        }

        using var server = new MathServer(endpoint);
        if (!server.Start())
        {
            Console.Error.WriteLine($"Could not listen on {endpoint}.");
            return 1;
        }

        Console.WriteLine($"Listening on {server.Endpoint}");
        Console.WriteLine("Press Enter (or close the input) to stop.");
        Console.ReadLine();
        server.Stop();
        if (socketPath is not null)
            File.Delete(socketPath);
        Console.WriteLine("Stopped.");
        return 0;
    }
}
