using System;
using System.Collections.Generic;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace NetServer.P2P.NatAgent;

/// <summary>
/// <c>reflector ADDRESS:PORT [ADDRESS:PORT...]</c>: a UDP socket and a TCP listener on each
/// endpoint (port 0: the kernel's choice, the TCP listener then takes the same number). A datagram
/// that starts with <see cref="BindRequest"/> is answered from the same socket with the source
/// endpoint it came from as ASCII (<c>203.0.113.11:40000</c>), like a STUN binding, and never with
/// more bytes than the request (no amplification: a shorter request is refused); any other datagram
/// is printed as <c>received</c>. A TCP connection gets the observed endpoint and a newline, then is
/// closed. Command: <c>send LOCAL REMOTE TEXT</c> sends TEXT from the socket bound at LOCAL.
/// </summary>
internal sealed class ReflectorMode : IAgentMode
{
    /// <summary>The first bytes of a binding request.</summary>
    public const string BindRequest = "natlab-bind";

    private static readonly IPEndPoint s_anyV4 = new(IPAddress.Any, 0);

    private readonly IReadOnlyList<IPEndPoint> _endpoints;
    private readonly List<Binding> _bindings = [];
    private readonly List<Task> _loops = [];
    private readonly CancellationTokenSource _stop = new();

    private ReflectorMode(IReadOnlyList<IPEndPoint> endpoints) => _endpoints = endpoints;

    public static ReflectorMode Create(string[] args) => args.Length == 0
        ? throw new AgentUsageException("reflector: at least one ADDRESS:PORT to bind")
        : new ReflectorMode([.. args.Select(IPEndPoint.Parse)]);

    public Task StartAsync()
    {
        foreach (var endpoint in _endpoints)
        {
            var udp = new Socket(endpoint.AddressFamily, SocketType.Dgram, ProtocolType.Udp);
            var tcp = new Socket(endpoint.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
            var binding = new Binding(udp, tcp);
            _bindings.Add(binding);
            udp.Bind(endpoint);
            tcp.Bind(binding.Local);
            tcp.Listen();
            AgentOutput.Line($"listening udp={binding.Local} tcp={tcp.LocalEndPoint}");
            _loops.Add(ReflectAsync(binding));
            _loops.Add(AcceptAsync(binding));
        }

        return Task.CompletedTask;
    }

    public async Task RunAsync(string[] words)
    {
        switch (words[0])
        {
            case "send":
                var local = AgentOutput.Endpoint(words, 1);
                var remote = AgentOutput.Endpoint(words, 2);
                var payload = Encoding.ASCII.GetBytes(AgentOutput.Word(words, 3));
                var binding = _bindings.Find(b => b.Local.Equals(local)) ?? throw new AgentUsageException($"send: no socket bound at {local}");
                var sent = await binding.Udp.SendToAsync(payload, SocketFlags.None, remote);
                AgentOutput.Line($"sent from={local} to={remote} bytes={sent}");
                break;
            default:
                throw new AgentUsageException($"reflector: unknown command '{words[0]}' (send LOCAL REMOTE TEXT | quit)");
        }
    }

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync();
        foreach (var binding in _bindings)
        {
            binding.Udp.Dispose();
            binding.Tcp.Dispose();
        }

        await Task.WhenAll(_loops);
        _stop.Dispose();
    }

    private async Task ReflectAsync(Binding binding)
    {
        var buffer = new byte[2048];
        var request = Encoding.ASCII.GetBytes(BindRequest);
        while (!_stop.IsCancellationRequested)
        {
            try
            {
                var result = await binding.Udp.ReceiveFromAsync(buffer, SocketFlags.None, s_anyV4, _stop.Token);
                var from = (IPEndPoint)result.RemoteEndPoint;
                var data = buffer.AsMemory(0, result.ReceivedBytes);
                if (!data.Span.StartsWith(request))
                {
                    AgentOutput.Line($"received on={binding.Local} from={from} {AgentOutput.Describe(data.Span)}");
                    continue;
                }

                var answer = Encoding.ASCII.GetBytes(from.ToString());
                if (answer.Length > data.Length)
                {
                    AgentOutput.Line($"refused on={binding.Local} from={from} bytes={data.Length} answer_bytes={answer.Length}");
                    continue;
                }

                await binding.Udp.SendToAsync(answer, SocketFlags.None, from, _stop.Token);
                AgentOutput.Line($"reflected on={binding.Local} from={from}");
            }
            catch (Exception e) when (e is OperationCanceledException or ObjectDisposedException || _stop.IsCancellationRequested)
            {
                return;
            }
            catch (SocketException e) when (!_stop.IsCancellationRequested)
            {
                AgentOutput.Error($"reflector udp {binding.Local}: {e.SocketErrorCode}: {e.Message}");
            }
        }
    }

    private async Task AcceptAsync(Binding binding)
    {
        while (!_stop.IsCancellationRequested)
        {
            try
            {
                using var connection = await binding.Tcp.AcceptAsync(_stop.Token);
                var from = (IPEndPoint)connection.RemoteEndPoint!;
                await connection.SendAsync(Encoding.ASCII.GetBytes(from + "\n"), SocketFlags.None, _stop.Token);
                connection.Shutdown(SocketShutdown.Both);
                AgentOutput.Line($"accepted on={binding.Local} from={from}");
            }
            catch (Exception e) when (e is OperationCanceledException or ObjectDisposedException || _stop.IsCancellationRequested)
            {
                return;
            }
            catch (SocketException e) when (!_stop.IsCancellationRequested)
            {
                AgentOutput.Error($"reflector tcp {binding.Local}: {e.SocketErrorCode}: {e.Message}");
            }
        }
    }

    private sealed record Binding(Socket Udp, Socket Tcp)
    {
        public IPEndPoint Local => (IPEndPoint)Udp.LocalEndPoint!;
    }
}
