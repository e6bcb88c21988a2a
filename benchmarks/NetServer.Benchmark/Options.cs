using System;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Net;

namespace NetServer.Benchmark;

internal enum Role
{
    Both,
    Server,
    Client,
}

/// <summary>Command-line options, named as in the seed benchmarks (-a -p -c -m -s -z -t).</summary>
internal sealed class Options
{
    public string Protocol { get; private set; } = "tcp";

    public string Scenario { get; private set; } = "echo";

    /// <summary>
    /// The stream transport: the protocol itself for tcp, uds and ssl; for msg and proto the one
    /// given with --transport (default tcp); tcp for http, ssl for https; udp has none.
    /// </summary>
    public string Transport => IsMessageProtocol ? _messageTransport : Protocol switch
    {
        "http" or "ws" => "tcp",
        "https" or "wss" or "relay" => "ssl",
        _ => Protocol,
    };

    /// <summary>http and https: requests and responses, counted one by one by the clients and the server.</summary>
    public bool IsHttp => Protocol is "http" or "https";

    /// <summary>http: requests each client keeps in flight (pipeline: MESSAGES; get and trace: one).</summary>
    public int Depth => Scenario == "pipeline" ? Messages : 1;

    /// <summary>relay: RelayServer and RelayClient (NetServer.P2P) over TLS; scenario forward.</summary>
    public bool IsRelay => Protocol == "relay";

    /// <summary>udp and sudp (secure UDP: SecureUdpServer and SecureUdpClient): datagrams, counted by the clients.</summary>
    public bool IsDatagram => Protocol is "udp" or "sudp";

    /// <summary>sudp with server and client in separate processes: the 32-byte session secret both derive their keys from (--key, hex).</summary>
    public string? Key { get; private set; }

    /// <summary>msg and proto: messages over a stream transport, counted one by one by the clients.</summary>
    public bool IsMessageProtocol => Protocol is "msg" or "proto";

    /// <summary>ws and wss: WebSocket messages (WsServer and WsClient, over TCP or TLS), counted one by one by the clients.</summary>
    public bool IsWebSocket => Protocol is "ws" or "wss";

    /// <summary>ws, wss: the request path of the upgrade (--path; default /ws, kestrel-reference's endpoint; ours takes any).</summary>
    public string RequestPath => Path ?? "/ws";

    /// <summary>ws, wss: text messages instead of binary ones (--text).</summary>
    public bool Text { get; private set; }

    private string _messageTransport = "tcp";

    public Role Role { get; private set; } = Role.Both;

    public string Address { get; private set; } = "127.0.0.1";

    public int Port { get; private set; } = -1;

    public string? Path { get; private set; }

    public int Clients { get; private set; } = 1;

    /// <summary>Messages in flight per client: --messages, else 16 for http pipeline (wrk's depth in build/bench-http.sh) and 1000 for the rest.</summary>
    public int Messages => _messages ?? (IsHttp ? 16 : 1000);

    private int? _messages;

    public int Size { get; private set; } = 32;

    public double Seconds { get; private set; } = 10;

    /// <summary>Client: seconds of traffic before the measured window opens (--warmup; default 0).</summary>
    public double WarmupSeconds { get; private set; }

    public int Threads { get; private set; }

    public bool InlineCompletions { get; private set; }

    /// <summary>tcp server: expect a PROXY header (v1 or v2) from this trusted address or network (--proxy-trust; docs/proxy-protocol.md).</summary>
    public string? ProxyTrust { get; private set; }

    /// <summary>Client: the server's process, whose CPU time over the measured window the report gives per message (--server-pid).</summary>
    public int? ServerPid { get; private set; }

    /// <summary>udp: the server runs its socket on a thread of its own with blocking calls (OptionDedicatedThread).</summary>
    public bool DedicatedThread { get; private set; }

    /// <summary>proto echo: the server unpacks each payload and sends it back typed (else it sends the envelope back as it came).</summary>
    public bool Typed { get; private set; }

    public bool Json { get; private set; } = true;

    public bool Quiet { get; private set; }

    public bool TraceAllocations { get; private set; }

    /// <summary>--telemetry: every NetServer meter and activity source listened to (see <see cref="TelemetrySink"/>).</summary>
    public bool Telemetry { get; private set; }

    /// <summary>--telemetry-metrics: the meters only, no activity listener (metrics on, traces off).</summary>
    public bool TelemetryMetricsOnly { get; private set; }

    public bool Memory { get; private set; }

    /// <summary>--logging LEVEL: the server's events go to an ILogger (console) at this minimum level (see <see cref="BenchLogging"/>); null: no listener.</summary>
    public Microsoft.Extensions.Logging.LogLevel? Logging { get; private set; }

    /// <summary>udp multicast: the group the server sends to and the clients join.</summary>
    public string Group { get; private set; } = "239.255.0.1";

    /// <summary>udp multicast: the interface index given with --interface, if any.</summary>
    public int? Interface { get; private set; }

    /// <summary>multicast: messages per second the server sends (0: as fast as it can).</summary>
    public int Rate { get; private set; }

    /// <summary>ssl: the folder with server.pfx and ca.pem (default: the repository's certs/, found upwards from the program).</summary>
    public string? CertificateFolder { get; private set; }

    /// <summary>Echo: bytes each client keeps in flight.</summary>
    public long InFlight => (long)Messages * Size;

    /// <summary>The port to use: the given one, or 0 (any free port) when client and server run together, else 1111.</summary>
    public int EffectivePort => Port >= 0 ? Port : Role == Role.Both ? 0 : 1111;

    public string EffectivePath => Path ?? System.IO.Path.Combine(System.IO.Path.GetTempPath(),
        Role == Role.Both ? $"netserver-bench-{Environment.ProcessId}.sock" : "netserver-bench.sock");

    public const string Usage = """
        netserver-bench PROTOCOL SCENARIO [options]

          PROTOCOL   tcp | uds | ssl (TLS over TCP) | udp | msg (length-prefixed messages:
                     MessageServer and MessageClient, over tcp by default, see --transport) |
                     proto (protobuf envelopes: ProtoServer and ProtoClient, over msg; echo only) |
                     http, https (HttpServer, HttpsServer answering as benchmarks/KestrelReference:
                     GET any path -> "Hello, World!" text/plain, TRACE -> the request echoed;
                     the client is a raw HTTP/1.1 load client: get, pipeline, trace only) |
                     ws, wss (WebSocket: WsServer and WsClient over TCP, WssServer and WssClient
                     over TLS with ssl's certificates; echo and multicast; binary messages, or
                     text with --text) |
                     sudp (secure UDP: SecureUdpServer and SecureUdpClient, AES-256-GCM, one
                     session per client; echo only: udp echo with every datagram sealed and opened
                     on both sides, 30 bytes more on the wire) |
                     relay (RelayServer and RelayClient of NetServer.P2P over TLS with ssl's
                     certificates; scenario forward only)
          SCENARIO   echo       round trip: each client writes MESSAGES x SIZE bytes once, then
                                sends back whatever it receives (messages = bytes / SIZE); udp:
                                MESSAGES datagrams of SIZE in flight per client, each echo answered
                                with a new datagram, one more per client each second (as echoref's
                                udpclient does, so lost datagrams cannot stall a client)
                                msg: each client sends MESSAGES messages of SIZE bytes, then sends
                                every message it receives back as a message of its own; the server
                                sends every message back (OnMessage -> SendAsync); messages are
                                counted one by one
                                proto: the same with envelopes, each carrying a SIZE-byte protobuf
                                payload (SIZE >= 5); both sides parse and check every envelope in
                                place and send it back as it came; --typed: the server unpacks the
                                payload and sends it back typed, in a reply envelope of its own
                                ws, wss: each client sends MESSAGES messages of SIZE bytes once
                                upgraded, then sends every message it receives back (one message
                                each way per echo); the server's sessions send every message back
                                with its type (SendBinaryAsync, SendTextAsync); messages are
                                counted one by one. The client drives any WebSocket echo server,
                                kestrel-reference's /ws too (--role client -p PORT)
                     forward    relay: CLIENTS pairs of peers register with the relay; each peer
                                sends MESSAGES envelopes (a SIZE-byte BenchPing payload, addressed
                                to its partner), as each proto echo client does, and sends one back
                                for every envelope it receives: every message is routed by the relay (To read in place,
                                From rewritten, the bytes copied into the partner's queue). Counts
                                messages forwarded (received by the peers), one by one. --role
                                server runs the relay alone and prints the bytes it allocates per
                                forwarded message; --role client drives a relay of another process
                     multicast  the server multicasts SIZE-byte messages to every client; udp: to a
                                group the clients join, each datagram numbered (SIZE >= 8) so the
                                clients can count the ones they missed; msg, ws: one message each
                     reply      tcp, uds, ssl: like echo, but each client sends MESSAGES messages
                                of SIZE bytes with a send each, and both sides answer every
                                complete SIZE-byte message with a send of its own from OnReceived
                                (as chat and game servers do), not one send per received chunk
                     latency    tcp, uds, ssl: one SIZE-byte message in flight per client: send,
                                wait for the echo, send again; reports round trips per second and
                                their p50, p99, p99.9 and maximum time. Any echo server answers it
                     handshake  each client connects, completes the TLS handshake (tcp, uds: the
                                connect), disconnects and starts again until the time is up
                     get        http, https: each client sends "GET / HTTP/1.1" with Host (as wrk
                                does), one in flight, and a new one for each response
                     pipeline   http, https: the same with MESSAGES requests in flight per client
                                (default 16), written at once, then one more per response
                     trace      http, https: TRACE with "Content-Length: 0" (benchmarks/wrk/trace.lua),
                                one in flight; the server sends the request back as message/http
                     An http server (--role server) answers every scenario's requests, whichever
                     is named. Responses are framed by Content-Length; one that is not 200 is an error.

        Options (as in the seed benchmarks):
          -r, --role ROLE        both (default: server and client in this process), server, client
          -a, --address ADDRESS  server address (default 127.0.0.1)
          -p, --port PORT        server port (default: a free port with --role both, else 1111)
              --path PATH        uds: the Unix socket path (default: a file in the temp folder);
                                 ws, wss: the request path of the upgrade (default /ws)
              --text             ws, wss: text messages (UTF-8, checked as they arrive) instead of binary
              --transport T      msg, proto: tcp (default), ssl (TLS, certificates as for ssl) or uds
              --typed            proto echo: the server deserializes each payload (Unpack) and
                                 serializes it back into its reply; the report adds what
                                 protobuf-net alone allocates per deserialization, for comparison
              --certs DIR        ssl: folder with server.pfx (password netserver) and ca.pem, the CA
                                 the client trusts (default: certs/ found upwards from the program)
          -c, --clients N        working clients (default 1; relay: pairs of peers)
          -m, --messages N       echo, reply: messages in flight per client (relay: per peer; default 1000);
                                 http pipeline: requests in flight per client (default 16)
          -s, --size BYTES       message size (default 32)
              --group ADDRESS    udp multicast: the group (default 239.255.0.1; the port is --port)
              --interface INDEX  udp multicast: the interface index to send and join on (default:
                                 the loopback interface when --address is a loopback address,
                                 else the system's choice, 0)
              --rate N           multicast: N messages per second (default: as fast as the server can)
          -z, --seconds S        seconds to benchmark (default 10; a server runs until stopped when 0)
          -w, --warmup S         client: S seconds of traffic before the measured window opens (default 0;
                                 the first active second is always left out), so that JIT tiering, pools
                                 and connects settle: in-process comparisons of a few seconds need it
          -t, --threads N        socket I/O threads (default: the runtime's choice)
              --inline           run socket completions inline on the I/O threads
              --proxy-trust NET  tcp server: every connection starts with a PROXY header (v1 or v2)
                                 from NET (an address or CIDR network), e.g. behind HAProxy send-proxy-v2
              --server-pid PID   client: report the CPU time (user + system, /proc/PID/stat) the
                                 server's process used in the measured window, per message
                                 ("serverCpuNsPerMessage"); the server runs as another process
              --dedicated-thread udp, sudp server: blocking calls on a thread of its own (OptionDedicatedThread)
              --key HEX          sudp with --role server or client: the 32-byte session secret (64 hex
                                 digits), the same on both sides and new for every run (a server
                                 holds sessions for clients 0 to CLIENTS - 1: give it -c too); with
                                 --role both a random one is made
              --no-json          do not print the JSON result line
          -q, --quiet            no progress line
              --trace-allocations  print which types were allocated in the measured window
                                 (sampled), to explain B/msg
              --telemetry        listen to every NetServer meter and activity source, as a
                                 metrics/traces collector would (what they cost when on)
              --telemetry-metrics  the same for the meters only (traces off)
              --logging LEVEL    the server's events (NetServer.Hosting's NetServerLogger) to a
                                 console logger at LEVEL: information (the default level of a
                                 host), debug (every connection's close too), none (attached, off)
              --memory           server: each second, force a full GC and print the managed heap
                                 per connected session (connect idle clients to measure it)
          -h, --help             this text

        Output: the seed figures (errors, total time, data, messages, throughput, latency), the bytes
        allocated per message in this process, a progress line on stderr while running, and one JSON
        line on stdout that starts with {"protocol". The handshake scenario reports handshakes
        (connects for tcp and uds) per second, their mean time and the bytes allocated per handshake;
        latency reports round trips per second, their times (minNs, meanNs, p50Ns, p99Ns, p999Ns,
        maxNs) and the bytes allocated per round trip.
        udp adds the datagram figures of the whole run ("datagrams" in the JSON): sent, received and
        lost (echo: sent - received, counted after waiting up to 1 s for the ones in flight;
        multicast: by the datagrams' numbers), refills, and the server's totals when it runs here.
        Losses are UDP's, reported as figures, not errors.
        http and https count requests: "totalMessages" are responses (client) or requests (server),
        "allocatedBytesPerMessage" bytes allocated per request; a server prints each second the
        requests it answered and the bytes it allocated (as kestrel-reference --stats does).
        msg, proto, ws and wss add "transport"; proto adds "typed" and "protobufNetBytesPerDeserialize",
        what protobuf-net alone allocates per Serializer.Deserialize of the payload (measured after
        the run), the floor for --typed's B/msg; ws and wss add "text". ws and wss count messages one
        by one (the data is messages x SIZE); a ws server counts frames (bytes / frame length) and
        prints each second "N ws messages  B B allocated", as kestrel-reference --stats does.
        """;

    public static Options? Parse(string[] args, TextWriter error)
    {
        var options = new Options();
        var positional = 0;
        for (var i = 0; i < args.Length; i++)
        {
            var arg = args[i];
            string Next()
            {
                if (i + 1 >= args.Length)
                    throw new ArgumentException($"Option {arg} needs a value.");
                return args[++i];
            }

            int NextInt(int min) => ParseInt(arg, Next(), min);

            switch (arg)
            {
                case "-h" or "--help":
                    return null;
                case "-r" or "--role":
                    options.Role = Next() switch
                    {
                        "both" => Role.Both,
                        "server" => Role.Server,
                        "client" => Role.Client,
                        var other => throw new ArgumentException($"Unknown role '{other}' (both, server, client)."),
                    };
                    break;
                case "-a" or "--address":
                    options.Address = Next();
                    break;
                case "-p" or "--port":
                    options.Port = NextInt(0);
                    break;
                case "--path":
                    options.Path = Next();
                    break;
                case "--transport":
                    options._messageTransport = Next();
                    break;
                case "--certs":
                    options.CertificateFolder = Next();
                    break;
                case "--group":
                    options.Group = Next();
                    break;
                case "--interface":
                    options.Interface = NextInt(0);
                    break;
                case "--rate":
                    options.Rate = NextInt(0);
                    break;
                case "-c" or "--clients":
                    options.Clients = NextInt(1);
                    break;
                case "-m" or "--messages":
                    options._messages = NextInt(1);
                    break;
                case "-s" or "--size":
                    options.Size = NextInt(1);
                    break;
                case "-z" or "--seconds":
                    options.Seconds = double.Parse(Next(), CultureInfo.InvariantCulture);
                    if (options.Seconds < 0)
                        throw new ArgumentException("Seconds must not be negative.");
                    break;
                case "-w" or "--warmup":
                    options.WarmupSeconds = double.Parse(Next(), CultureInfo.InvariantCulture);
                    if (options.WarmupSeconds is < 0 or > 3600)
                        throw new ArgumentException("Warm-up seconds must be from 0 to 3600.");
                    break;
                case "-t" or "--threads":
                    options.Threads = NextInt(1);
                    break;
                case "--proxy-trust":
                    options.ProxyTrust = Next();
                    break;
                case "--inline":
                    options.InlineCompletions = true;
                    break;
                case "--key":
                    options.Key = Next();
                    break;
                case "--server-pid":
                    options.ServerPid = NextInt(1);
                    break;
                case "--dedicated-thread":
                    options.DedicatedThread = true;
                    break;
                case "--no-json":
                    options.Json = false;
                    break;
                case "-q" or "--quiet":
                    options.Quiet = true;
                    break;
                case "--trace-allocations":
                    options.TraceAllocations = true;
                    break;
                case "--telemetry":
                    options.Telemetry = true;
                    break;
                case "--telemetry-metrics":
                    options.Telemetry = options.TelemetryMetricsOnly = true;
                    break;
                case "--memory":
                    options.Memory = true;
                    break;
                case "--logging":
                    options.Logging = BenchLogging.ParseLevel(Next());
                    break;
                case "--typed":
                    options.Typed = true;
                    break;
                case "--text":
                    options.Text = true;
                    break;
                default:
                    if (arg.StartsWith('-'))
                        throw new ArgumentException($"Unknown option '{arg}'.");
                    if (positional == 0)
                        options.Protocol = arg;
                    else if (positional == 1)
                        options.Scenario = arg;
                    else
                        throw new ArgumentException($"Unexpected argument '{arg}'.");
                    positional++;
                    break;
            }
        }

        if (options.Protocol is not ("tcp" or "uds" or "ssl" or "udp" or "msg" or "proto" or "http" or "https" or "ws" or "wss" or "relay" or "sudp"))
            throw new ArgumentException($"Unknown protocol '{options.Protocol}' (tcp, uds, ssl, udp, sudp, msg, proto, http, https, ws, wss, relay).");
        if (options.IsRelay && positional < 2)
            options.Scenario = "forward";
        if (options.IsRelay != (options.Scenario == "forward"))
            throw new ArgumentException(options.IsRelay ? $"relay has no {options.Scenario} scenario (forward)." : "forward is the relay's scenario.");
        if (options.IsRelay && options.Size < ProtoEcho.MinPayload)
            throw new ArgumentException($"A relay payload (a BenchPing of exactly SIZE bytes) needs --size {ProtoEcho.MinPayload} or more.");
        if (options.Protocol == "sudp" && options.Scenario != "echo")
            throw new ArgumentException($"sudp has no {options.Scenario} scenario (echo).");
        if (options.Key is not null && (options.Protocol != "sudp" || options.Key.Length != 2 * SecureUdpSession.SecretLength || !options.Key.All(Uri.IsHexDigit)))
            throw new ArgumentException($"--key is for sudp: {SecureUdpSession.SecretLength} bytes as {2 * SecureUdpSession.SecretLength} hex digits.");
        if (options.Protocol == "sudp" && options.Role != Role.Both && options.Key is null)
            throw new ArgumentException("sudp with server and client in separate processes needs --key (the same new secret on both sides, e.g. from openssl rand -hex 32).");
        if (options.IsHttp && positional < 2)
            options.Scenario = "get";
        if (options.IsHttp != (options.Scenario is "get" or "pipeline" or "trace"))
            throw new ArgumentException(options.IsHttp
                ? $"{options.Protocol} has no {options.Scenario} scenario (get, pipeline, trace)."
                : $"get, pipeline and trace are http and https scenarios, not {options.Protocol} ones.");
        if (options._messageTransport is not ("tcp" or "uds" or "ssl"))
            throw new ArgumentException($"Unknown transport '{options._messageTransport}' (tcp, uds, ssl).");
        if (!options.IsMessageProtocol && options._messageTransport != "tcp")
            throw new ArgumentException("--transport is for msg and proto (tcp, uds and ssl are transports of their own).");
        if (options.Protocol == "msg" && options.Scenario is not ("echo" or "multicast"))
            throw new ArgumentException($"msg has no {options.Scenario} scenario (echo, multicast).");
        if (options.Protocol == "proto" && options.Scenario != "echo")
            throw new ArgumentException($"proto has no {options.Scenario} scenario (echo).");
        if (options.ProxyTrust is not null && options.Protocol != "tcp")
            throw new ArgumentException("--proxy-trust is for tcp.");
        if (options.Typed && options.Protocol != "proto")
            throw new ArgumentException("--typed is for proto echo.");
        if (options.IsWebSocket && options.Scenario is not ("echo" or "multicast"))
            throw new ArgumentException($"{options.Protocol} has no {options.Scenario} scenario (echo, multicast).");
        if (options.Text && !options.IsWebSocket)
            throw new ArgumentException("--text is for ws and wss.");
        if (options.IsWebSocket && !options.RequestPath.StartsWith('/'))
            throw new ArgumentException($"A request path starts with '/', not '{options.RequestPath}'.");
        if (options.Protocol == "proto" && options.Size < ProtoEcho.MinPayload)
            throw new ArgumentException($"A proto payload (a BenchPing of exactly SIZE bytes) needs --size {ProtoEcho.MinPayload} or more.");
        if (!options.IsHttp && !options.IsRelay && options.Scenario is not ("echo" or "reply" or "latency" or "multicast" or "handshake"))
            throw new ArgumentException($"Unknown scenario '{options.Scenario}' (echo, reply, latency, multicast, handshake).");
        if (options.IsDatagram && options.Scenario == "handshake")
            throw new ArgumentException("udp has no handshake scenario (there is no connection to set up).");
        if (options.IsDatagram && options.Scenario is "reply" or "latency")
            throw new ArgumentException($"{options.Protocol} has no {options.Scenario} scenario (tcp, uds and ssl have; udp echo answers each datagram with a send of its own).");
        if (options.IsDatagram && options.Size > UdpPeer.MaxDatagramPayload - (options.Protocol == "sudp" ? SecureUdpSession.Overhead : 0))
            throw new ArgumentException($"A {options.Protocol} message (one datagram) holds at most {UdpPeer.MaxDatagramPayload - (options.Protocol == "sudp" ? SecureUdpSession.Overhead : 0)} bytes.");
        if (options.Protocol == "udp" && options.Scenario == "multicast" && !IPAddress.TryParse(options.Group, out _))
            throw new ArgumentException($"The multicast group '{options.Group}' is not an IP address.");
        if (options.Role != Role.Server && options.Seconds == 0)
            throw new ArgumentException("A client needs --seconds greater than 0.");
        if (options.ServerPid is not null && (options.Role != Role.Client || options.Scenario is "latency" or "handshake"))
            throw new ArgumentException("--server-pid is for a client role (echo, reply, multicast, relay forward and the http and message scenarios) driving a server in another process.");
        if (options.InFlight > int.MaxValue)
            throw new ArgumentException("messages x size must fit in 2 GiB.");
        return options;
    }

    private static int ParseInt(string option, string text, int min)
    {
        if (!int.TryParse(text, NumberStyles.Integer, CultureInfo.InvariantCulture, out var value) || value < min)
            throw new ArgumentException($"Option {option} needs an integer of at least {min}, not '{text}'.");
        return value;
    }
}
