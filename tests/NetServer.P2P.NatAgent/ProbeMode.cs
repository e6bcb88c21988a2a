using System;
using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace NetServer.P2P.NatAgent;

/// <summary>
/// <c>probe [ADDRESS:PORT]</c> (default <c>0.0.0.0:0</c>): one UDP socket, and the commands
/// <list type="bullet">
/// <item><c>map REMOTE [WAIT_MS]</c>: one binding request to a reflector; <c>mapped via=REMOTE observed=EP rtt_us=N</c> or <c>timeout via=REMOTE wait_ms=N</c> (another datagram meanwhile: event <c>stray from=EP bytes=N text=T</c>);</item>
/// <item><c>send REMOTE TEXT</c>: <c>sent to=REMOTE bytes=N</c>;</item>
/// <item><c>recv [WAIT_MS]</c>: the next datagram, <c>received from=EP bytes=N text=T</c>, or <c>timeout wait_ms=N</c>;</item>
/// <item><c>tcp REMOTE [WAIT_MS]</c>: a TCP connection (from another, ephemeral port) to a reflector, <c>tcp-mapped via=REMOTE observed=EP</c> or <c>tcp-failed via=REMOTE error=E</c>.</item>
/// </list>
/// One request per <c>map</c>, no retry: on the lab's veth links nothing is lost but what a rule
/// drops, and a late answer to a retry would be read by a later <c>recv</c>.
/// </summary>
internal sealed class ProbeMode : IAgentMode
{
    // At least as long as any answer (an IPv4 endpoint is at most 21 bytes), so the reflector may answer.
    private const int RequestLength = 32;

    private static readonly IPEndPoint s_anyV4 = new(IPAddress.Any, 0);

    private readonly IPEndPoint _endpoint;
    private readonly Socket _udp;
    private readonly byte[] _buffer = new byte[2048];

    private ProbeMode(IPEndPoint endpoint)
    {
        _endpoint = endpoint;
        _udp = new Socket(endpoint.AddressFamily, SocketType.Dgram, ProtocolType.Udp);
    }

    public static ProbeMode Create(string[] args) => args.Length switch
    {
        0 => new ProbeMode(s_anyV4),
        1 => new ProbeMode(IPEndPoint.Parse(args[0])),
        _ => throw new AgentUsageException("probe: at most one ADDRESS:PORT to bind"),
    };

    public Task StartAsync()
    {
        _udp.Bind(_endpoint);
        AgentOutput.Line($"bound udp={_udp.LocalEndPoint}");
        return Task.CompletedTask;
    }

    public Task RunAsync(string[] words) => words[0] switch
    {
        "map" => MapAsync(AgentOutput.Endpoint(words, 1), AgentOutput.WaitMilliseconds(words, 2)),
        "send" => SendAsync(AgentOutput.Endpoint(words, 1), AgentOutput.Word(words, 2)),
        "recv" => ReceiveAsync(AgentOutput.WaitMilliseconds(words, 1)),
        "tcp" => TcpAsync(AgentOutput.Endpoint(words, 1), AgentOutput.WaitMilliseconds(words, 2)),
        _ => throw new AgentUsageException($"probe: unknown command '{words[0]}' (map | send | recv | tcp | quit)"),
    };

    public ValueTask DisposeAsync()
    {
        _udp.Dispose();
        return ValueTask.CompletedTask;
    }

    private async Task MapAsync(IPEndPoint reflector, int waitMilliseconds)
    {
        var request = new byte[RequestLength];
        request.AsSpan().Fill((byte)'.');
        Encoding.ASCII.GetBytes(ReflectorMode.BindRequest, request);
        var started = Stopwatch.GetTimestamp();
        await _udp.SendToAsync(request, SocketFlags.None, reflector);

        using var deadline = new CancellationTokenSource(waitMilliseconds);
        try
        {
            while (true)
            {
                var result = await _udp.ReceiveFromAsync(_buffer, SocketFlags.None, s_anyV4, deadline.Token);
                var from = (IPEndPoint)result.RemoteEndPoint;
                var data = _buffer.AsSpan(0, result.ReceivedBytes);
                if (!from.Equals(reflector))
                {
                    // Not the answer: kept visible as an event rather than lost, under a verb of its
                    // own so that it is never taken for the reply to a later recv.
                    AgentOutput.Line($"stray from={from} {AgentOutput.Describe(data)}");
                    continue;
                }

                var rtt = Stopwatch.GetElapsedTime(started);
                AgentOutput.Line($"mapped via={reflector} observed={IPEndPoint.Parse(Encoding.ASCII.GetString(data))} rtt_us={(long)rtt.TotalMicroseconds}");
                return;
            }
        }
        catch (OperationCanceledException)
        {
            AgentOutput.Line($"timeout via={reflector} wait_ms={waitMilliseconds}");
        }
    }

    private async Task SendAsync(IPEndPoint remote, string text)
    {
        var sent = await _udp.SendToAsync(Encoding.ASCII.GetBytes(text), SocketFlags.None, remote);
        AgentOutput.Line($"sent to={remote} bytes={sent}");
    }

    private async Task ReceiveAsync(int waitMilliseconds)
    {
        using var deadline = new CancellationTokenSource(waitMilliseconds);
        try
        {
            var result = await _udp.ReceiveFromAsync(_buffer, SocketFlags.None, s_anyV4, deadline.Token);
            AgentOutput.Line($"received from={result.RemoteEndPoint} {AgentOutput.Describe(_buffer.AsSpan(0, result.ReceivedBytes))}");
        }
        catch (OperationCanceledException)
        {
            AgentOutput.Line($"timeout wait_ms={waitMilliseconds}");
        }
    }

    private static async Task TcpAsync(IPEndPoint reflector, int waitMilliseconds)
    {
        using var deadline = new CancellationTokenSource(waitMilliseconds);
        using var tcp = new Socket(reflector.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
        try
        {
            await tcp.ConnectAsync(reflector, deadline.Token);
            var buffer = new byte[64];
            var length = 0;
            while (length < buffer.Length && Array.IndexOf(buffer, (byte)'\n', 0, length) < 0)
            {
                var read = await tcp.ReceiveAsync(buffer.AsMemory(length), SocketFlags.None, deadline.Token);
                if (read == 0)
                    break;
                length += read;
            }

            var observed = Encoding.ASCII.GetString(buffer, 0, length).Trim();
            AgentOutput.Line($"tcp-mapped via={reflector} observed={IPEndPoint.Parse(observed)} local={tcp.LocalEndPoint}");
        }
        catch (OperationCanceledException)
        {
            AgentOutput.Line($"tcp-failed via={reflector} error=Timeout wait_ms={waitMilliseconds}");
        }
        catch (SocketException e)
        {
            AgentOutput.Line($"tcp-failed via={reflector} error={e.SocketErrorCode}");
        }
    }
}
