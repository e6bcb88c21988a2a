using System;
using System.Diagnostics;
using System.IO;
using System.Net;
using System.Threading;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Udp;

/// <summary>
/// A slow network link to a UDP receiver: a veth pair whose far end lives in a network namespace
/// of its own (so nothing sent over it leaves the machine), with a token-bucket queueing discipline
/// on the near end. Datagrams wait in that queue and stay charged to the sending socket, so a
/// socket with a small send buffer really gets "would block" from the kernel, which Linux's
/// loopback interface never gives a UDP sender. The receiver is python3 in the namespace: it
/// reads datagrams that start with a 4-byte sequence number and reports how many arrived and
/// whether in order. Building the link needs root and iproute2 (ip, tc).
/// </summary>
internal sealed class SlowLink : IAsyncDisposable
{
    private static int s_next;
    private static readonly Lazy<string?> s_unavailable = new(Probe);

    private readonly string _namespace;
    private readonly string _near;
    private readonly FileStream _subnet;
    private Process? _receiver;

    private SlowLink(string name, string near, FileStream subnet, int index)
    {
        _namespace = name;
        _near = near;
        _subnet = subnet;
        LocalAddress = IPAddress.Parse($"10.213.{index}.1");
        RemoteAddress = IPAddress.Parse($"10.213.{index}.2");
    }

    /// <summary>Why slow links cannot be built on this machine; null when they can.</summary>
    public static string? Unavailable => s_unavailable.Value;

    /// <summary>This host's end of the link.</summary>
    public IPAddress LocalAddress { get; }

    /// <summary>The receiver's address, reachable only through the link.</summary>
    public IPAddress RemoteAddress { get; }

    /// <summary>Where the receiver listens once <see cref="StartReceiverAsync"/> returned.</summary>
    public IPEndPoint ReceiverEndpoint => new(RemoteAddress, ReceiverPort);

    private const int ReceiverPort = 9999;

    /// <summary>Builds a link that carries <paramref name="rate"/> (a tc rate such as "2mbit").</summary>
    public static SlowLink Create(string rate)
    {
        var n = Interlocked.Increment(ref s_next);
        var tag = $"{Environment.ProcessId % 100000}x{n}";
        var (subnet, index) = ReserveSubnet();
        var link = new SlowLink($"netserver-{tag}", $"nsv{tag}a", subnet, index);
        var far = $"nsv{tag}b";
        try
        {
            Run(["ip", "netns", "add", link._namespace]);
            var mac = $"02:4e:53:00:{index:x2}:0";
            Run(["ip", "link", "add", link._near, "address", mac + "1", "type", "veth", "peer", "name", far, "address", mac + "2"]);
            Run(["ip", "link", "set", far, "netns", link._namespace]);
            Run(["ip", "addr", "add", $"{link.LocalAddress}/30", "dev", link._near]);
            Run(["ip", "link", "set", link._near, "up"]);

            // The receiver's address resolved from the start: datagrams sent while ARP resolves wait
            // in the neighbour queue, and the first sent after it resolves can overtake them.
            Run(["ip", "neigh", "replace", link.RemoteAddress.ToString(), "lladdr", mac + "2", "dev", link._near, "nud", "permanent"]);
            Run(["ip", "netns", "exec", link._namespace, "ip", "addr", "add", $"{link.RemoteAddress}/30", "dev", far]);
            Run(["ip", "netns", "exec", link._namespace, "ip", "link", "set", far, "up"]);

            // veth hands each datagram to the backlog of the CPU that dequeued it from the qdisc, and
            // two CPUs' backlogs run independently: the link itself could reorder what the sender
            // sent in order. Steering every datagram to one CPU's backlog (RPS) keeps the link FIFO.
            Run(["ip", "netns", "exec", link._namespace, "sh", "-c", $"echo 1 > /sys/class/net/{far}/queues/rx-0/rps_cpus"]);

            // A large queue limit: datagrams wait (charged to the sender's socket) instead of being dropped.
            Run(["tc", "qdisc", "add", "dev", link._near, "root", "tbf", "rate", rate, "burst", "16kb", "limit", "16mb"]);

            // Every datagram to the receiver must leave through this link's queue, not through a
            // leftover interface with the same subnet.
            var route = Output(["ip", "-o", "route", "get", link.RemoteAddress.ToString()]);
            if (!route.Contains($" dev {link._near} ", StringComparison.Ordinal))
                throw new InvalidOperationException($"The route to {link.RemoteAddress} does not use the link {link._near}: {route.Trim()}");
        }
        catch
        {
            link.DeleteLink();
            throw;
        }

        return link;
    }

    /// <summary>Starts the receiver; it reports once it has been idle for <paramref name="idle"/> after the first datagram.</summary>
    public async Task StartReceiverAsync(TimeSpan idle)
    {
        const string script = """
            import socket, struct, sys
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
            s.bind((sys.argv[1], int(sys.argv[2])))
            print("ready", flush=True)
            s.settimeout(60)
            count, last, breaks, first = 0, -1, 0, "-"
            while True:
                try:
                    data = s.recv(65536)
                except socket.timeout:
                    break
                s.settimeout(float(sys.argv[3]))
                sequence = struct.unpack("<i", data[:4])[0]
                if sequence != last + 1:
                    breaks += 1
                    if breaks == 1:
                        first = f"{last}->{sequence}@{count}"
                last = sequence
                count += 1
            print(f"count {count} breaks {breaks} first {first}", flush=True)
            """;
        var info = new ProcessStartInfo("ip") { UseShellExecute = false, RedirectStandardOutput = true, RedirectStandardError = true };
        foreach (var arg in new[] { "netns", "exec", _namespace, "/usr/bin/python3", "-c", script, RemoteAddress.ToString(), ReceiverPort.ToString(System.Globalization.CultureInfo.InvariantCulture), idle.TotalSeconds.ToString(System.Globalization.CultureInfo.InvariantCulture) })
            info.ArgumentList.Add(arg);
        _receiver = Process.Start(info) ?? throw new InvalidOperationException("The receiver did not start.");
        var ready = await _receiver.StandardOutput.ReadLineAsync().WaitAsync(Wait.Default);
        if (ready != "ready")
            Assert.Fail($"The receiver did not start: {ready} {await _receiver.StandardError.ReadToEndAsync().WaitAsync(Wait.Default)}");
    }

    /// <summary>
    /// Waits for the receiver's report: how many datagrams arrived, and, unless their sequence
    /// numbers ran 0, 1, 2, ..., where the order first broke ("last->next@position") and how often.
    /// </summary>
    public async Task<(int Count, string? Disorder)> ReceiverReportAsync()
    {
        var line = await _receiver!.StandardOutput.ReadLineAsync().WaitAsync(TimeSpan.FromSeconds(90));
        var parts = (line ?? string.Empty).Split(' ');
        Assert.True(parts is ["count", _, "breaks", _, "first", _], $"Unexpected receiver report: {line}");
        var count = int.Parse(parts[1], System.Globalization.CultureInfo.InvariantCulture);
        return (count, parts[3] == "0" ? null : $"{parts[3]} break(s), the first {parts[5]}");
    }

    public async ValueTask DisposeAsync()
    {
        if (_receiver is { } receiver)
        {
            if (!receiver.HasExited)
                receiver.Kill(entireProcessTree: true);

            // The receiver holds the namespace open until it has exited.
            await receiver.WaitForExitAsync().WaitAsync(Wait.Default);
            receiver.Dispose();
        }

        DeleteLink();
    }

    /// <summary>
    /// Deletes the veth pair (and its queueing discipline; the kernel has unregistered both ends when
    /// the command returns), then the namespace, then lets go of the subnet. Deleting the namespace
    /// first would leave the pair to the kernel's asynchronous namespace cleanup: the near end,
    /// carrier down and still holding the subnet's address and route, could then outlive the lock,
    /// and the next link on that subnet would send through it (dropped at once, so the sender
    /// never waits).
    /// </summary>
    private void DeleteLink()
    {
        Run(["ip", "link", "del", _near], failOk: true);
        Run(["ip", "netns", "del", _namespace], failOk: true);
        _subnet.Dispose();
    }

    /// <summary>
    /// A /30 of 10.213.0.0/16 no other link on this host uses (the test projects run at once, each
    /// in a process of its own): held by an exclusive lock on a file per subnet until the link is deleted.
    /// </summary>
    private static (FileStream Lock, int Index) ReserveSubnet()
    {
        var start = Environment.ProcessId % 250;
        for (var i = 0; i < 250; i++)
        {
            var index = (start + i) % 250;
            try
            {
                // FileShare.None takes an advisory lock (flock) that a second process cannot get; the
                // kernel drops it if this process dies, so a stale file never blocks a subnet.
                return (new FileStream(Path.Combine(Path.GetTempPath(), $"netserver-slowlink-10.213.{index}.lock"), FileMode.OpenOrCreate, FileAccess.ReadWrite, FileShare.None), index);
            }
            catch (IOException)
            {
                // Held by another link: try the next subnet.
            }
        }

        throw new InvalidOperationException("Every subnet of 10.213.0.0/16 is held by another slow link.");
    }

    private static string? Probe()
    {
        if (!OperatingSystem.IsLinux())
            return "Slow links are built with Linux network namespaces.";
        if (Environment.UserName != "root")
            return "Building a slow link (network namespace, veth, tc) needs root.";
        foreach (var tool in new[] { "/usr/sbin/ip", "/usr/sbin/tc", "/usr/bin/python3" })
        {
            if (!File.Exists(tool) && !File.Exists(tool.Replace("/usr/sbin/", "/sbin/", StringComparison.Ordinal)))
                return $"Building a slow link needs {Path.GetFileName(tool)} (Debian packages iproute2, python3).";
        }

        try
        {
            Create("1mbit").DeleteLink();
            return null;
        }
        catch (Exception e) when (e is InvalidOperationException or IOException or System.ComponentModel.Win32Exception)
        {
            return $"A slow link could not be built on this machine: {e.Message}";
        }
    }

    /// <summary>Runs a short administrative command (ip, tc), bounded; throws with its error output if it fails.</summary>
    private static void Run(string[] command, bool failOk = false) => Output(command, failOk);

    /// <summary>Runs a short administrative command like <see cref="Run"/> and returns what it printed.</summary>
    private static string Output(string[] command, bool failOk = false)
    {
        var info = new ProcessStartInfo(command[0]) { UseShellExecute = false, RedirectStandardOutput = true, RedirectStandardError = true };
        foreach (var arg in command[1..])
            info.ArgumentList.Add(arg);
        using var process = Process.Start(info) ?? throw new InvalidOperationException($"{command[0]} did not start.");
        // ip and tc print a few lines at most: far below a pipe's capacity, so reading one stream
        // to its end before the other cannot block the command.
        var output = process.StandardOutput.ReadToEnd();
        var errors = process.StandardError.ReadToEnd();
        if (!process.WaitForExit(15_000))
        {
            process.Kill(entireProcessTree: true);
            throw new InvalidOperationException($"{string.Join(' ', command)} did not finish within 15 s.");
        }

        if (process.ExitCode != 0 && !failOk)
            throw new InvalidOperationException($"{string.Join(' ', command)} failed ({process.ExitCode}): {errors.Trim()}");
        return output;
    }
}

/// <summary>A fact that needs a <see cref="SlowLink"/>; skipped with the reason where one cannot be built.</summary>
[AttributeUsage(AttributeTargets.Method, AllowMultiple = false)]
public sealed class SlowLinkFactAttribute : FactAttribute
{
    public SlowLinkFactAttribute()
    {
        if (SlowLink.Unavailable is { } reason)
            Skip = reason;
    }
}
