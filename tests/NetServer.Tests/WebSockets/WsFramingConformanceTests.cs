using System;
using System.Collections.Generic;
using System.Text;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.WebSockets;

/// <summary>
/// Autobahn groups 1 (framing and echo), 3 (reserved bits) and 4 (opcodes) against our WsServer,
/// driven by a raw client: exact frames in, the exact echo or the close code (and the end of the
/// connection) out, and the server still serving afterwards.
/// </summary>
public sealed class WsFramingConformanceTests
{
    private static readonly int[] s_lengths = [0, 1, 125, 126, 127, 128, 65535, 65536, 1 << 20];

    /// <summary>Transport, opcode, payload length, chunk size (0: all in one send).</summary>
    public static TheoryData<TransportKind, int, int, int> EchoCases
    {
        get
        {
            var data = new TheoryData<TransportKind, int, int, int>();
            foreach (var kind in WsTransports.Kinds)
            {
                foreach (var opcode in new[] { WsWire.Text, WsWire.Binary })
                {
                    foreach (var length in s_lengths)
                    {
                        data.Add(kind, opcode, length, 0);
                        data.Add(kind, opcode, length, 997);
                        if (length <= 128)
                            data.Add(kind, opcode, length, 1); // every header and payload boundary
                    }
                }
            }

            return data;
        }
    }

    public static TheoryData<TransportKind> Transports => WsTransports.All;

    [Theory]
    [MemberData(nameof(EchoCases))]
    public async Task A_message_comes_back_whole_with_its_type(TransportKind kind, int opcode, int length, int chunk)
    {
        await using var host = WsTestHost.Start(kind);
        using var client = await host.OpenAsync();
        var payload = WsWire.Payload(length, text: opcode == WsWire.Text);
        await client.SendAsync(WsWire.Frame(opcode, payload), chunk);
        await client.ExpectMessageAsync(opcode, payload);

        await client.SendAsync(WsWire.CloseFrame(1000));
        await client.ExpectCloseAsync(1000);
        Assert.Empty(host.Log.Errors);
    }

    [Theory]
    [MemberData(nameof(Transports))]
    public async Task Many_frames_cut_at_random_points_come_back_in_order(TransportKind kind)
    {
        await using var host = WsTestHost.Start(kind);
        using var client = await host.OpenAsync();
        var random = new Random(6455);
        var sent = new List<(int Opcode, byte[] Payload)>();
        var frames = new List<byte[]>();
        for (var i = 0; i < 60; i++)
        {
            var opcode = i % 3 == 0 ? WsWire.Binary : WsWire.Text;
            var length = (i % 4) switch { 0 => random.Next(0, 126), 1 => random.Next(126, 2000), 2 => random.Next(0, 10), _ => random.Next(65536, 70000) };
            var payload = WsWire.Payload(length, opcode == WsWire.Text, seed: i);
            sent.Add((opcode, payload));
            frames.Add(WsWire.Frame(opcode, payload));
        }

        // All the bytes, cut into pieces of 1 to 3000 bytes: headers, masks and payloads split anywhere.
        var all = WsWire.Concat([.. frames]);
        var receiving = Task.Run(async () =>
        {
            foreach (var (opcode, payload) in sent)
                await client.ExpectMessageAsync(opcode, payload);
        });
        for (var at = 0; at < all.Length;)
        {
            var piece = Math.Min(random.Next(1, 3000), all.Length - at);
            await client.SendAsync(all.AsSpan(at, piece).ToArray());
            at += piece;
        }

        await receiving.WaitAsync(Wait.Default);
        Assert.Empty(host.Log.Errors);
    }

    [Theory]
    [InlineData(100)]
    [InlineData(200)]
    [InlineData(70000)]
    public async Task A_header_arriving_one_byte_at_a_time_is_read_whole(int length)
    {
        // Every length form: each header byte (length bytes and mask key included) its own send, then the payload at once.
        await using var host = WsTestHost.Start();
        using var client = await host.OpenAsync();
        var payload = WsWire.Payload(length, text: false);
        var frame = WsWire.Frame(WsWire.Binary, payload);
        var header = frame.Length - length;
        await client.SendAsync(frame.AsSpan(0, header).ToArray(), chunk: 1);
        await client.SendAsync(frame.AsSpan(header).ToArray());
        await client.ExpectMessageAsync(WsWire.Binary, payload);
    }

    /// <summary>Transport, the fault, its close code: the same failure over every transport.</summary>
    public static TheoryData<TransportKind, string, int> FaultsOverTransports
    {
        get
        {
            var data = new TheoryData<TransportKind, string, int>();
            foreach (var kind in WsTransports.Kinds)
            {
                data.Add(kind, "reserved opcode", 1002);
                data.Add(kind, "unmasked", 1002);
                data.Add(kind, "invalid UTF-8", 1007);
                data.Add(kind, "too big", 1009);
            }

            return data;
        }
    }

    [Theory]
    [MemberData(nameof(FaultsOverTransports))]
    public async Task A_fault_closes_with_its_code_over_every_transport(TransportKind kind, string fault, int code)
    {
        await using var host = WsTestHost.Start(kind);
        var bytes = fault switch
        {
            "reserved opcode" => WsWire.Frame(5, "x"u8),
            "unmasked" => WsWire.Frame(WsWire.Text, "x"u8, mask: false),
            "invalid UTF-8" => WsWire.Frame(WsWire.Text, WsWire.Hex("48c0af")),
            _ => WsWire.Frame(WsWire.Binary, [], announced: WsOptions.DefaultMaxMessageSize + 1L),
        };
        await host.AssertFaultAsync(bytes, code);
    }

    [Theory]
    [InlineData(2)]
    [InlineData(8)]
    public async Task A_length_in_a_longer_form_than_needed_is_accepted(int lengthForm)
    {
        await using var host = WsTestHost.Start();
        using var client = await host.OpenAsync();
        await client.SendAsync(WsWire.Frame(WsWire.Text, "short"u8, lengthForm: lengthForm));
        await client.ExpectMessageAsync(WsWire.Text, "short"u8.ToArray());
    }

    [Theory]
    [InlineData(WsWire.Text)]
    [InlineData(WsWire.Binary)]
    [InlineData(WsWire.Ping)]
    [InlineData(WsWire.Close)]
    public async Task A_client_frame_without_a_mask_is_a_protocol_error(int opcode)
    {
        await using var host = WsTestHost.Start();
        var payload = opcode == WsWire.Close ? WsWire.ClosePayload(1000, []) : "unmasked"u8.ToArray();
        await host.AssertFaultAsync(WsWire.Frame(opcode, payload, mask: false), 1002);
    }

    [Fact]
    public async Task A_64_bit_length_with_its_top_bit_set_is_a_protocol_error()
    {
        await using var host = WsTestHost.Start();
        var header = WsWire.Frame(WsWire.Binary, [], announced: long.MinValue + 5, lengthForm: 8);
        await host.AssertFaultAsync(header, 1002);
    }

    // ---- Group 3: reserved bits ----

    /// <summary>Opcode of the bad frame, its RSV bits (0-7), chunk size.</summary>
    public static TheoryData<int, int, int> ReservedBitCases
    {
        get
        {
            var data = new TheoryData<int, int, int>();
            foreach (var opcode in new[] { WsWire.Text, WsWire.Binary, WsWire.Ping, WsWire.Pong, WsWire.Close })
            {
                for (var rsv = 1; rsv <= 7; rsv++)
                    data.Add(opcode, rsv, 0);
            }

            data.Add(WsWire.Text, 2, 1); // Autobahn 3.3: the same bytes, one per send
            data.Add(WsWire.Binary, 4, 1);
            data.Add(WsWire.Ping, 6, 1);
            return data;
        }
    }

    [Theory]
    [MemberData(nameof(ReservedBitCases))]
    public async Task Reserved_bits_without_an_extension_fail_after_the_echo_of_the_frame_before(int opcode, int rsv, int chunk)
    {
        await using var host = WsTestHost.Start();
        var payload = opcode == WsWire.Close ? WsWire.ClosePayload(1000, []) : "reserved"u8.ToArray();
        var before = "before"u8.ToArray();
        var bytes = WsWire.Concat(
            WsWire.Frame(WsWire.Text, before),
            WsWire.Frame(opcode, payload, rsv: rsv),
            WsWire.Frame(WsWire.Ping, "after"u8)); // never answered: nothing is read after the fault
        await host.AssertFaultAsync(bytes, 1002, chunk, before: (WsWire.Text, before));
    }

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(4)]
    public async Task Reserved_bits_on_a_frame_alone_fail(int rsv)
    {
        await using var host = WsTestHost.Start();
        await host.AssertFaultAsync(WsWire.Frame(WsWire.Text, "x"u8, rsv: rsv), 1002);
    }

    // ---- Group 4: opcodes ----

    public static TheoryData<int, bool> ReservedOpcodeCases
    {
        get
        {
            var data = new TheoryData<int, bool>();
            foreach (var opcode in new[] { 3, 4, 5, 6, 7, 11, 12, 13, 14, 15 })
            {
                data.Add(opcode, false);
                data.Add(opcode, true);
            }

            return data;
        }
    }

    [Theory]
    [MemberData(nameof(ReservedOpcodeCases))]
    public async Task A_reserved_opcode_is_a_protocol_error(int opcode, bool afterValidFrame)
    {
        await using var host = WsTestHost.Start();
        var before = Encoding.UTF8.GetBytes($"before opcode {opcode}");
        if (!afterValidFrame)
        {
            await host.AssertFaultAsync(WsWire.Frame(opcode, []), 1002);
            return;
        }

        // Autobahn 4.1.2-4.2.5: a valid frame, the reserved one with a payload, then a ping, in one write.
        var bytes = WsWire.Concat(
            WsWire.Frame(WsWire.Text, before),
            WsWire.Frame(opcode, "reserved payload"u8),
            WsWire.Frame(WsWire.Ping, []));
        await host.AssertFaultAsync(bytes, 1002, before: (WsWire.Text, before));
    }
}
