using System;
using System.Globalization;
using System.IO;
using System.Text;
using System.Threading.Tasks;
using Xunit;

namespace NetServer.Tests.WebSockets;

/// <summary>
/// The server's opening handshake (RFC 6455 4.2) with raw requests: the exact 101, the refusals
/// (400, 403, 426, the application's own answer), subprotocol negotiation, plain HTTP next to the
/// WebSocket, and frames that arrive with the request.
/// </summary>
public sealed class WsHandshakeConformanceTests
{
    private const string Exact101 =
        "HTTP/1.1 101 Switching Protocols\r\n" +
        "Upgrade: websocket\r\n" +
        "Connection: Upgrade\r\n" +
        "Sec-WebSocket-Accept: " + WsWire.SampleAccept + "\r\n" +
        "\r\n";

    private sealed record Response(int Status, string Head, string Body);

    private static string? Field(string head, string name)
    {
        foreach (var line in head.Split("\r\n"))
        {
            if (line.StartsWith(name + ":", StringComparison.OrdinalIgnoreCase))
                return line.Substring(name.Length + 1).Trim();
        }

        return null;
    }

    /// <summary>Sends <paramref name="request"/> as is and reads one response (its body by Content-Length).</summary>
    private static async Task<Response> ExchangeAsync(WsRawClient client, string request)
    {
        await client.SendAsync(Encoding.ASCII.GetBytes(request));
        return await ReadResponseAsync(client);
    }

    private static async Task<Response> ReadResponseAsync(WsRawClient client)
    {
        var head = await client.Reader.ReadHeadAsync();
        var status = int.Parse(head.AsSpan(9, 3), NumberStyles.None, CultureInfo.InvariantCulture);
        var body = Field(head, "Content-Length") is { } length
            ? Encoding.UTF8.GetString(await client.Reader.ReadBytesAsync(int.Parse(length, CultureInfo.InvariantCulture)))
            : string.Empty;
        return new Response(status, head, body);
    }

    private static string Upgrade(string version = "HTTP/1.1", string key = WsWire.SampleKey, string fields = "", string method = "GET") =>
        $"{method} /chat {version}\r\nHost: server.example.com\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
        (key.Length > 0 ? $"Sec-WebSocket-Key: {key}\r\n" : string.Empty) +
        $"Sec-WebSocket-Version: 13\r\n{fields}\r\n";

    [Fact]
    public async Task The_101_for_the_RFC_sample_key_is_exactly_the_RFC_answer()
    {
        await using var host = WsTestHost.Start();
        using var client = new WsRawClient(await host.ConnectRawAsync());
        await client.SendAsync(Encoding.ASCII.GetBytes(
            "GET /chat HTTP/1.1\r\nHost: server.example.com\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nOrigin: http://example.com\r\nSec-WebSocket-Version: 13\r\n\r\n"));
        Assert.Equal(Exact101, await client.Reader.ReadHeadAsync());

        // Nothing follows the head but frames: the next bytes are the pong.
        await client.SendAsync(WsWire.Frame(WsWire.Ping, "after 101"u8));
        await client.ExpectMessageAsync(WsWire.Pong, "after 101"u8.ToArray());
    }

    [Fact]
    public async Task The_101_carries_the_chosen_subprotocol_and_extension_in_that_order_and_nothing_else()
    {
        await using var host = WsTestHost.Start(configure: options =>
        {
            options.SubProtocols.Add("chat");
            options.Deflate = new WsDeflateOptions();
        });
        using var client = new WsRawClient(await host.ConnectRawAsync());
        var head = await client.UpgradeAsync("Sec-WebSocket-Protocol: other, chat\r\nSec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n");
        Assert.Equal(Exact101.Replace("\r\n\r\n", "\r\nSec-WebSocket-Protocol: chat\r\nSec-WebSocket-Extensions: permessage-deflate\r\n\r\n", StringComparison.Ordinal), head);
    }

    [Theory]
    [InlineData("Upgrade: WebSocket\r\nConnection: keep-alive, Upgrade\r\n")]
    [InlineData("upgrade: websocket\r\nconnection: upgrade\r\n")]
    [InlineData("Upgrade: websocket\r\nConnection: keep-alive\r\nConnection: Upgrade\r\n")]
    public async Task Tokens_compare_without_case_and_as_lists(string fields)
    {
        await using var host = WsTestHost.Start();
        using var client = new WsRawClient(await host.ConnectRawAsync());
        var key = Convert.ToBase64String(Guid.NewGuid().ToByteArray());
        var response = await ExchangeAsync(client, $"GET / HTTP/1.1\r\nHost: x\r\n{fields}Sec-WebSocket-Key:  {key} \r\nSec-WebSocket-Version: 13\r\n\r\n");
        Assert.Equal(101, response.Status);
        Assert.Equal(WsWire.Accept(key), Field(response.Head, "Sec-WebSocket-Accept"));
    }

    /// <summary>The request, the status, a field the answer must carry ("-": none).</summary>
    public static TheoryData<string, int, string> RefusedRequests => new()
    {
        { Upgrade(key: string.Empty), 400, "-" },
        { Upgrade(fields: $"Sec-WebSocket-Key: {WsWire.SampleKey}\r\n"), 400, "-" },                       // two key lines
        { Upgrade(key: "not base64 at all!!!!!=="), 400, "-" },
        { Upgrade(key: Convert.ToBase64String(new byte[15])), 400, "-" },
        { Upgrade(key: Convert.ToBase64String(new byte[17])), 400, "-" },
        { Upgrade(key: "dGhlIHNhbXBsZSBub25jZQ"), 400, "-" },                                             // no padding
        { Upgrade().Replace("Sec-WebSocket-Version: 13", "Sec-WebSocket-Version: 8", StringComparison.Ordinal), 426, "Sec-WebSocket-Version: 13" },
        { Upgrade().Replace("Sec-WebSocket-Version: 13\r\n", string.Empty, StringComparison.Ordinal), 426, "Sec-WebSocket-Version: 13" },
        { Upgrade(fields: "Sec-WebSocket-Version: 13\r\n"), 426, "Sec-WebSocket-Version: 13" },            // two version lines
        { Upgrade(version: "HTTP/1.0"), 400, "-" },
        { Upgrade().Replace("Host: server.example.com\r\n", string.Empty, StringComparison.Ordinal), 400, "-" }, // RFC 9112 3.2
        { Upgrade(fields: "Content-Length: 5\r\n").Replace("\r\n\r\n", "\r\n\r\nhello", StringComparison.Ordinal), 400, "-" },
    };

    [Theory]
    [MemberData(nameof(RefusedRequests))]
    public async Task A_bad_upgrade_request_is_refused_and_the_connection_closes(string request, int status, string field)
    {
        await using var host = WsTestHost.Start();
        using var client = new WsRawClient(await host.ConnectRawAsync());
        var response = await ExchangeAsync(client, request);
        Assert.Equal(status, response.Status);
        if (field != "-")
            Assert.Contains("\r\n" + field + "\r\n", response.Head, StringComparison.OrdinalIgnoreCase);
        Assert.Null(Field(response.Head, "Sec-WebSocket-Accept"));
        await client.ExpectEndAsync();
        Assert.Equal(0, host.Log.Upgraded);
    }

    [Theory]
    [InlineData("Origin: https://evil.example\r\n", 403)]
    [InlineData("", 403)]
    [InlineData("Origin: https://good.example\r\n", 101)]
    [InlineData("Origin: HTTPS://GOOD.EXAMPLE\r\n", 101)]
    public async Task AllowedOrigins_refuses_other_origins_with_403(string origin, int status)
    {
        await using var host = WsTestHost.Start(configure: options => options.AllowedOrigins.Add("https://good.example"));
        using var client = new WsRawClient(await host.ConnectRawAsync());
        var response = await ExchangeAsync(client, Upgrade(fields: origin));
        Assert.Equal(status, response.Status);
        if (status == 403)
            await client.ExpectEndAsync();
    }

    [Fact]
    public async Task OnWsConnecting_returning_false_refuses_with_403()
    {
        await using var host = WsTestHost.Start();
        host.Log.Connecting = (_, _) => false;
        using var client = new WsRawClient(await host.ConnectRawAsync());
        var response = await ExchangeAsync(client, Upgrade());
        Assert.Equal(403, response.Status);
        await client.ExpectEndAsync();
        Assert.Equal(0, host.Log.Upgraded);
    }

    [Fact]
    public async Task OnWsConnecting_may_answer_with_its_own_response_and_the_connection_stays_HTTP()
    {
        await using var host = WsTestHost.Start();
        host.Log.Connecting = (_, response) =>
        {
            response.MakeErrorResponse(401, "a token is needed");
            return false;
        };
        using var client = new WsRawClient(await host.ConnectRawAsync());
        var response = await ExchangeAsync(client, Upgrade());
        Assert.Equal(401, response.Status);
        Assert.Equal("a token is needed", response.Body);

        var plain = await ExchangeAsync(client, "GET /after HTTP/1.1\r\nHost: x\r\n\r\n");
        Assert.Equal(200, plain.Status);
        Assert.Equal("plain http: /after", plain.Body);
    }

    [Fact]
    public async Task OnWsConnecting_may_add_fields_to_the_101()
    {
        await using var host = WsTestHost.Start();
        host.Log.Connecting = (_, response) =>
        {
            response.SetHeader("X-Session", "42");
            return true;
        };
        using var client = new WsRawClient(await host.ConnectRawAsync());
        var head = await client.UpgradeAsync();
        Assert.Equal(Exact101.Replace("\r\n\r\n", "\r\nX-Session: 42\r\n\r\n", StringComparison.Ordinal), head);
    }

    /// <summary>The server's subprotocols, the client's lines of Sec-WebSocket-Protocol, the one chosen ("-": none).</summary>
    public static TheoryData<string, string, string> SubProtocolCases => new()
    {
        { "chat.v2,chat.v1", "Sec-WebSocket-Protocol: chat.v1, chat.v2\r\n", "chat.v2" },   // the server's preference wins
        { "chat.v2,chat.v1", "Sec-WebSocket-Protocol: chat.v1\r\n", "chat.v1" },
        { "chat.v2,chat.v1", "Sec-WebSocket-Protocol: other, another\r\n", "-" },          // none in common: still upgraded
        { "chat.v2,chat.v1", "Sec-WebSocket-Protocol: other\r\nSec-WebSocket-Protocol: chat.v1\r\n", "chat.v1" }, // split over two lines
        { "chat.v2,chat.v1", "Sec-WebSocket-Protocol: other,\r\nSec-WebSocket-Protocol: ,chat.v2 \r\n", "chat.v2" },
        { "chat.v2,chat.v1", "", "-" },
        { "-", "Sec-WebSocket-Protocol: chat.v1\r\n", "-" },
    };

    [Theory]
    [MemberData(nameof(SubProtocolCases))]
    public async Task The_server_picks_its_preferred_subprotocol_among_those_offered(string server, string offer, string chosen)
    {
        await using var host = WsTestHost.Start(configure: options =>
        {
            if (server != "-")
            {
                foreach (var name in server.Split(','))
                    options.SubProtocols.Add(name);
            }
        });
        using var client = new WsRawClient(await host.ConnectRawAsync());
        var head = await client.UpgradeAsync(offer);
        Assert.StartsWith("HTTP/1.1 101 ", head, StringComparison.Ordinal);
        Assert.Equal(chosen == "-" ? null : chosen, Field(head, "Sec-WebSocket-Protocol"));
        await client.SendAsync(WsWire.TextFrame("upgraded"));
        await client.ExpectMessageAsync(WsWire.Text, "upgraded"u8.ToArray());
    }

    [Theory]
    [InlineData("chat.v1", 101)]
    [InlineData("not.offered", 500)]
    public async Task A_subprotocol_named_by_the_application_must_be_one_the_client_offered(string named, int status)
    {
        await using var host = WsTestHost.Start();
        host.Log.Connecting = (_, response) =>
        {
            response.SetHeader("Sec-WebSocket-Protocol", named);
            return true;
        };
        using var client = new WsRawClient(await host.ConnectRawAsync());
        var response = await ExchangeAsync(client, Upgrade(fields: "Sec-WebSocket-Protocol: chat.v0, chat.v1\r\n"));
        Assert.Equal(status, response.Status);
        if (status == 101)
            Assert.Equal(named, Field(response.Head, "Sec-WebSocket-Protocol"));
        else
            await client.ExpectEndAsync();
    }

    [Fact]
    public async Task Plain_HTTP_and_static_content_work_next_to_the_WebSocket_and_the_connection_may_upgrade_after()
    {
        var folder = Path.Combine(Path.GetTempPath(), "ns-ws-static-" + Guid.NewGuid().ToString("N"));
        Directory.CreateDirectory(folder);
        try
        {
            await File.WriteAllTextAsync(Path.Combine(folder, "hello.txt"), "static hello");
            await using var host = WsTestHost.Start();
            ((WsServer)host.Server).AddStaticContent(folder, "/static");
            using var client = new WsRawClient(await host.ConnectRawAsync());

            var plain = await ExchangeAsync(client, "GET /index HTTP/1.1\r\nHost: x\r\n\r\n");
            Assert.Equal(200, plain.Status);
            Assert.Equal("plain http: /index", plain.Body);

            var file = await ExchangeAsync(client, "GET /static/hello.txt HTTP/1.1\r\nHost: x\r\n\r\n");
            Assert.Equal(200, file.Status);
            Assert.Equal("static hello", file.Body);

            // A POST that asks for the upgrade is not a WebSocket request (RFC 6455 4.1 asks for GET): plain HTTP.
            var post = await ExchangeAsync(client, Upgrade(method: "POST"));
            Assert.Equal(200, post.Status);
            Assert.Equal("plain http: /chat", post.Body);

            Assert.Equal(Exact101, (await ExchangeAsync(client, Upgrade())).Head);
            await client.SendAsync(WsWire.TextFrame("now a WebSocket"));
            await client.ExpectMessageAsync(WsWire.Text, "now a WebSocket"u8.ToArray());
        }
        finally
        {
            Directory.Delete(folder, recursive: true);
        }
    }

    [Theory]
    [InlineData(0)]
    [InlineData(1)]
    public async Task Frames_sent_with_the_upgrade_request_are_delivered(int chunk)
    {
        await using var host = WsTestHost.Start();
        using var client = new WsRawClient(await host.ConnectRawAsync());
        var frames = WsWire.Concat(WsWire.TextFrame("first"), WsWire.Frame(WsWire.Ping, "p"u8), WsWire.BinaryFrame([9, 8, 7]));
        await client.SendAsync(WsWire.Concat(Encoding.ASCII.GetBytes(Upgrade()), frames), chunk);
        Assert.Equal(Exact101, await client.Reader.ReadHeadAsync());
        await client.ExpectMessageAsync(WsWire.Text, "first"u8.ToArray());
        await client.ExpectMessageAsync(WsWire.Pong, "p"u8.ToArray());
        await client.ExpectMessageAsync(WsWire.Binary, [9, 8, 7]);
    }
}
