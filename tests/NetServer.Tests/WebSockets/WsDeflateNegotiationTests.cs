using System;
using System.IO.Compression;
using System.Text;
using NetServer.WebSockets;
using Xunit;

namespace NetServer.Tests.WebSockets;

/// <summary>The permessage-deflate handshake of RFC 7692 sections 5 and 7.1, from both ends.</summary>
public class WsDeflateNegotiationTests
{
    // --- Server: which offer is taken, and the exact answer ---

    [Theory]
    [InlineData("permessage-deflate", "permessage-deflate")]
    [InlineData("permessage-deflate; client_max_window_bits", "permessage-deflate")]
    [InlineData("permessage-deflate; client_max_window_bits=10", "permessage-deflate; client_max_window_bits=10")]
    [InlineData("permessage-deflate; client_max_window_bits=\"10\"", "permessage-deflate; client_max_window_bits=10")]
    [InlineData("permessage-deflate; client_max_window_bits=\"1\\0\"", "permessage-deflate; client_max_window_bits=10")]
    [InlineData("permessage-deflate; client_max_window_bits=15", "permessage-deflate")]
    [InlineData("permessage-deflate; client_max_window_bits=8", "permessage-deflate; client_max_window_bits=8")]
    [InlineData("permessage-deflate; server_no_context_takeover", "permessage-deflate; server_no_context_takeover")]
    [InlineData("permessage-deflate; client_no_context_takeover", "permessage-deflate; client_no_context_takeover")]
    [InlineData("permessage-deflate; server_max_window_bits=15", "permessage-deflate; server_max_window_bits=15")]
    [InlineData("permessage-deflate; server_max_window_bits=\"15\"", "permessage-deflate; server_max_window_bits=15")]
    [InlineData("permessage-deflate; client_no_context_takeover; server_no_context_takeover; server_max_window_bits=15; client_max_window_bits=9",
        "permessage-deflate; server_no_context_takeover; client_no_context_takeover; server_max_window_bits=15; client_max_window_bits=9")]
    [InlineData("PerMessage-Deflate; Server_No_Context_Takeover; CLIENT_MAX_WINDOW_BITS=12", "permessage-deflate; server_no_context_takeover; client_max_window_bits=12")]
    [InlineData("  permessage-deflate ;client_max_window_bits = 12 ;\tserver_no_context_takeover  ", "permessage-deflate; server_no_context_takeover; client_max_window_bits=12")]
    [InlineData("x-webkit-deflate-frame, permessage-deflate", "permessage-deflate")]
    [InlineData("foo; bar=\"baz\", , permessage-deflate; client_no_context_takeover", "permessage-deflate; client_no_context_takeover")]
    public void A_server_accepts_a_valid_offer_and_answers_it_exactly(string offer, string expectedResponse)
    {
        Assert.True(WsDeflateNegotiation.TrySelect(offer, new WsDeflateOptions(), out var agreed, out var response));
        Assert.Equal(expectedResponse, response);
        Assert.True(agreed.IsEnabled);
        Assert.Equal(15, agreed.ServerMaxWindowBits);
    }

    [Theory]
    [InlineData("permessage-deflate; server_max_window_bits=10")]  // a smaller window than our compressor has
    [InlineData("permessage-deflate; server_max_window_bits=8")]
    [InlineData("permessage-deflate; server_max_window_bits")]     // needs a value
    [InlineData("permessage-deflate; server_max_window_bits=16")]
    [InlineData("permessage-deflate; client_max_window_bits=7")]
    [InlineData("permessage-deflate; client_max_window_bits=16")]
    [InlineData("permessage-deflate; client_max_window_bits=abc")]
    [InlineData("permessage-deflate; client_max_window_bits=010")]   // no leading zeros
    [InlineData("permessage-deflate; client_max_window_bits=09")]
    [InlineData("permessage-deflate; client_max_window_bits=-9")]
    [InlineData("permessage-deflate; client_max_window_bits=1.0")]
    [InlineData("permessage-deflate; client_max_window_bits=\"\"")]
    [InlineData("permessage-deflate; client_max_window_bits=\"10")] // unterminated
    [InlineData("permessage-deflate; client_max_window_bits=")]
    [InlineData("permessage-deflate; client_max_window_bits=10; client_max_window_bits=10")]
    [InlineData("permessage-deflate; client_max_window_bits; client_max_window_bits")]
    [InlineData("permessage-deflate; server_no_context_takeover; server_no_context_takeover")]
    [InlineData("permessage-deflate; client_no_context_takeover; Client_No_Context_Takeover")]
    [InlineData("permessage-deflate; server_no_context_takeover=1")]  // takes no value
    [InlineData("permessage-deflate; client_no_context_takeover=\"\"")]
    [InlineData("permessage-deflate; mux")]                         // unknown parameter
    [InlineData("permessage-deflate;")]
    [InlineData("permessage-deflate; ; server_no_context_takeover")]
    [InlineData("permessage-deflate x")]
    [InlineData("permessage-deflate=1")]
    [InlineData("permessage-deflatex")]
    [InlineData("x-webkit-deflate-frame")]
    [InlineData("")]
    public void A_server_declines_an_offer_it_cannot_or_must_not_accept(string offer)
    {
        Assert.False(WsDeflateNegotiation.TrySelect(offer, new WsDeflateOptions(), out var agreed, out var response));
        Assert.False(agreed.IsEnabled);
        Assert.Equal(string.Empty, response);
    }

    [Theory]
    [InlineData("permessage-deflate; server_max_window_bits=10, permessage-deflate; client_max_window_bits", "permessage-deflate")]
    [InlineData("permessage-deflate; foo, permessage-deflate; server_no_context_takeover", "permessage-deflate; server_no_context_takeover")]
    [InlineData("permessage-deflate; client_max_window_bits=16, permessage-deflate; client_max_window_bits=11, permessage-deflate", "permessage-deflate; client_max_window_bits=11")]
    [InlineData("permessage-deflate; client_no_context_takeover, permessage-deflate", "permessage-deflate; client_no_context_takeover")]
    public void A_server_takes_the_first_offer_it_can_accept(string offers, string expectedResponse)
    {
        Assert.True(WsDeflateNegotiation.TrySelect(offers, new WsDeflateOptions(), out _, out var response));
        Assert.Equal(expectedResponse, response);
    }

    [Fact]
    public void A_server_reads_offers_split_over_several_field_lines_in_order()
    {
        var lines = new[] { "x-foo, permessage-deflate; server_max_window_bits=9", "permessage-deflate; client_max_window_bits=12; client_no_context_takeover", "permessage-deflate" };
        Assert.True(WsDeflateNegotiation.TrySelect(lines, new WsDeflateOptions(), out var agreed, out var response));
        Assert.Equal("permessage-deflate; client_no_context_takeover; client_max_window_bits=12", response);
        Assert.Equal(12, agreed.ClientMaxWindowBits);
        Assert.True(agreed.ClientNoContextTakeover);

        Assert.False(WsDeflateNegotiation.TrySelect(new[] { "permessage-deflate; server_max_window_bits=9", "x-foo" }, new WsDeflateOptions(), out _, out _));
        Assert.False(WsDeflateNegotiation.TrySelect(Array.Empty<string>(), new WsDeflateOptions(), out _, out _));
    }

    [Fact]
    public void A_server_reads_the_raw_bytes_of_a_field_value()
    {
        Assert.True(WsDeflateNegotiation.TrySelect("permessage-deflate; client_max_window_bits=9"u8, new WsDeflateOptions(), out var agreed, out var response));
        Assert.Equal("permessage-deflate; client_max_window_bits=9", response);
        Assert.Equal(9, agreed.ClientMaxWindowBits);

        // A header longer than the stack buffer of the string overload.
        var longOffer = new StringBuilder();
        for (var i = 0; i < 40; i++)
            longOffer.Append("x-extension-").Append(i).Append("; p=\"v\", ");
        longOffer.Append("permessage-deflate; server_no_context_takeover");
        Assert.True(WsDeflateNegotiation.TrySelect(longOffer.ToString(), new WsDeflateOptions(), out _, out response));
        Assert.Equal("permessage-deflate; server_no_context_takeover", response);

        // A char past Latin-1 cannot sneak through as a byte that means something.
        Assert.False(WsDeflateNegotiation.TrySelect("permessage-deflate; client_max_window_bits=1\u0130", new WsDeflateOptions(), out _, out _));
    }

    [Fact]
    public void The_server_options_decide_the_answer_and_the_agreed_parameters()
    {
        var options = new WsDeflateOptions { ServerContextTakeover = false };
        Assert.True(WsDeflateNegotiation.TrySelect("permessage-deflate", options, out var agreed, out var response));
        Assert.Equal("permessage-deflate; server_no_context_takeover", response);
        Assert.True(agreed.ResetsCompressor(isServer: true));
        Assert.False(agreed.ResetsDecompressor(isServer: true));

        options = new WsDeflateOptions { ClientContextTakeover = false };
        Assert.True(WsDeflateNegotiation.TrySelect("permessage-deflate", options, out agreed, out response));
        Assert.Equal("permessage-deflate; client_no_context_takeover", response);
        Assert.False(agreed.ResetsCompressor(isServer: true));
        Assert.True(agreed.ResetsDecompressor(isServer: true));

        // A client window limit is only sent to a client that offered client_max_window_bits...
        options = new WsDeflateOptions { ClientMaxWindowBits = 10 };
        Assert.True(WsDeflateNegotiation.TrySelect("permessage-deflate; client_max_window_bits", options, out agreed, out response));
        Assert.Equal("permessage-deflate; client_max_window_bits=10", response);
        Assert.Equal(10, agreed.ClientMaxWindowBits);
        Assert.True(WsDeflateNegotiation.TrySelect("permessage-deflate; client_max_window_bits=9", options, out agreed, out response));
        Assert.Equal("permessage-deflate; client_max_window_bits=9", response);

        // ...one that did not is still accepted, compressing with up to 15 bits (which we inflate).
        Assert.True(WsDeflateNegotiation.TrySelect("permessage-deflate", options, out agreed, out response));
        Assert.Equal("permessage-deflate", response);
        Assert.Equal(15, agreed.ClientMaxWindowBits);

        // A server asked to compress with less than 15 bits cannot: it declines everything.
        options = new WsDeflateOptions { ServerMaxWindowBits = 12 };
        Assert.False(WsDeflateNegotiation.TrySelect("permessage-deflate", options, out _, out _));
        Assert.False(WsDeflateNegotiation.TrySelect("permessage-deflate; server_max_window_bits=12", options, out _, out _));
    }

    [Fact]
    public void A_server_honours_a_clients_request_to_reset_the_server_compressor()
    {
        Assert.True(WsDeflateNegotiation.TrySelect("permessage-deflate; server_no_context_takeover", new WsDeflateOptions(), out var agreed, out _));
        Assert.True(agreed.ServerNoContextTakeover);
        Assert.True(agreed.ResetsCompressor(isServer: true));
        Assert.True(agreed.ResetsDecompressor(isServer: false));
        Assert.False(agreed.ResetsCompressor(isServer: false));
    }

    // --- Client: the offer, and what makes a response acceptable ---

    [Fact]
    public void A_client_offers_what_its_options_ask_and_never_client_max_window_bits()
    {
        Assert.Equal("permessage-deflate", WsDeflateNegotiation.BuildOffer(new WsDeflateOptions()));
        var all = new WsDeflateOptions { ServerContextTakeover = false, ClientContextTakeover = false, ServerMaxWindowBits = 10 };
        Assert.Equal("permessage-deflate; server_no_context_takeover; client_no_context_takeover; server_max_window_bits=10", WsDeflateNegotiation.BuildOffer(all));

        // Our compressor cannot promise a smaller window: nothing is offered.
        Assert.Equal(string.Empty, WsDeflateNegotiation.BuildOffer(new WsDeflateOptions { ClientMaxWindowBits = 14 }));

        // Our own server and client agree, end to end, on what both can run...
        var client = new WsDeflateOptions { ServerContextTakeover = false, ClientContextTakeover = false };
        Assert.True(WsDeflateNegotiation.TrySelect(WsDeflateNegotiation.BuildOffer(client), new WsDeflateOptions(), out var serverAgreed, out var response));
        Assert.Equal("permessage-deflate; server_no_context_takeover; client_no_context_takeover", response);
        Assert.True(WsDeflateNegotiation.TryAccept(response, client, out var clientAgreed, out var error), error);
        Assert.Equal(serverAgreed.ToString(), clientAgreed.ToString());

        // ...and a server limit the server cannot keep is declined, not broken.
        Assert.False(WsDeflateNegotiation.TrySelect(WsDeflateNegotiation.BuildOffer(all), new WsDeflateOptions(), out _, out _));
    }

    [Theory]
    [InlineData("permessage-deflate", false, false, 15)]
    [InlineData("permessage-deflate; server_no_context_takeover", true, false, 15)]
    [InlineData("permessage-deflate; client_no_context_takeover", false, true, 15)]
    [InlineData("permessage-deflate; server_max_window_bits=10", false, false, 10)] // a server may limit itself unasked
    [InlineData("permessage-deflate; server_max_window_bits=\"9\"", false, false, 9)]
    [InlineData("Permessage-Deflate; SERVER_NO_CONTEXT_TAKEOVER; Client_No_Context_Takeover", true, true, 15)]
    [InlineData("permessage-deflate ; server_max_window_bits = 8 ,", false, false, 8)]
    public void A_client_accepts_a_valid_response(string response, bool serverReset, bool clientReset, int serverBits)
    {
        Assert.True(WsDeflateNegotiation.TryAccept(response, new WsDeflateOptions(), out var agreed, out var error), error);
        Assert.Equal(string.Empty, error);
        Assert.True(agreed.IsEnabled);
        Assert.Equal(serverReset, agreed.ServerNoContextTakeover);
        Assert.Equal(clientReset, agreed.ClientNoContextTakeover);
        Assert.Equal(serverBits, agreed.ServerMaxWindowBits);
        Assert.Equal(15, agreed.ClientMaxWindowBits);
        Assert.Equal(clientReset, agreed.ResetsCompressor(isServer: false));
        Assert.Equal(serverReset, agreed.ResetsDecompressor(isServer: false));
    }

    [Theory]
    [InlineData(null)]
    [InlineData("")]
    public void A_response_without_extensions_declines_compression_without_failing(string? response)
    {
        Assert.True(WsDeflateNegotiation.TryAccept(response, new WsDeflateOptions(), out var agreed, out var error));
        Assert.False(agreed.IsEnabled);
        Assert.Equal(string.Empty, error);
    }

    [Theory]
    [InlineData("x-webkit-deflate-frame", "not offered")]
    [InlineData("permessage-deflate, x-foo", "'x-foo', which was not offered")]
    [InlineData("permessage-deflate, permessage-deflate", "more than once")]
    [InlineData("permessage-deflate; client_max_window_bits=10", "client_max_window_bits")]
    [InlineData("permessage-deflate; client_max_window_bits=15", "client_max_window_bits")]
    [InlineData("permessage-deflate; client_max_window_bits", "needs a value")]
    [InlineData("permessage-deflate; server_max_window_bits", "needs a value")]
    [InlineData("permessage-deflate; server_max_window_bits=7", "server_max_window_bits=7")]
    [InlineData("permessage-deflate; server_max_window_bits=16", "server_max_window_bits=16")]
    [InlineData("permessage-deflate; server_max_window_bits=x", "server_max_window_bits=x")]
    [InlineData("permessage-deflate; server_no_context_takeover; server_no_context_takeover", "twice")]
    [InlineData("permessage-deflate; server_no_context_takeover=true", "takes no value")]
    [InlineData("permessage-deflate; foo", "unknown parameter 'foo'")]
    [InlineData("permessage-deflate; server_max_window_bits=\"10", "malformed")]
    [InlineData("permessage-deflate garbage", "unexpected")]
    public void A_client_fails_an_invalid_response_with_a_clear_error(string response, string errorPart)
    {
        Assert.False(WsDeflateNegotiation.TryAccept(response, new WsDeflateOptions(), out var agreed, out var error));
        Assert.False(agreed.IsEnabled);
        Assert.Contains(errorPart, error, StringComparison.Ordinal);
    }

    [Fact]
    public void A_client_fails_a_response_that_does_not_confirm_what_it_asked_for()
    {
        var options = new WsDeflateOptions { ServerMaxWindowBits = 10 };
        Assert.True(WsDeflateNegotiation.TryAccept("permessage-deflate; server_max_window_bits=10", options, out var agreed, out _));
        Assert.Equal(10, agreed.ServerMaxWindowBits);
        Assert.True(WsDeflateNegotiation.TryAccept("permessage-deflate; server_max_window_bits=9", options, out agreed, out _));
        Assert.Equal(9, agreed.ServerMaxWindowBits);
        Assert.False(WsDeflateNegotiation.TryAccept("permessage-deflate; server_max_window_bits=11", options, out _, out var error));
        Assert.Contains("server_max_window_bits=10", error, StringComparison.Ordinal);
        Assert.False(WsDeflateNegotiation.TryAccept("permessage-deflate", options, out _, out error));
        Assert.Contains("server_max_window_bits=10", error, StringComparison.Ordinal);

        options = new WsDeflateOptions { ServerContextTakeover = false };
        Assert.True(WsDeflateNegotiation.TryAccept("permessage-deflate; server_no_context_takeover", options, out agreed, out _));
        Assert.True(agreed.ResetsDecompressor(isServer: false));
        Assert.False(WsDeflateNegotiation.TryAccept("permessage-deflate", options, out _, out error));
        Assert.Contains("server_no_context_takeover", error, StringComparison.Ordinal);

        // Our own client_no_context_takeover needs no confirmation: we reset either way.
        options = new WsDeflateOptions { ClientContextTakeover = false };
        Assert.True(WsDeflateNegotiation.TryAccept("permessage-deflate", options, out agreed, out _));
        Assert.True(agreed.ResetsCompressor(isServer: false));

        // Nothing was offered (see BuildOffer), so permessage-deflate cannot be accepted.
        Assert.False(WsDeflateNegotiation.TryAccept("permessage-deflate", new WsDeflateOptions { ClientMaxWindowBits = 12 }, out _, out error));
        Assert.Contains("not offered", error, StringComparison.Ordinal);
    }

    // --- Options ---

    [Fact]
    public void Options_have_the_documented_defaults_and_reject_invalid_values()
    {
        var options = new WsDeflateOptions();
        Assert.True(options.ServerContextTakeover);
        Assert.True(options.ClientContextTakeover);
        Assert.Equal(15, options.ServerMaxWindowBits);
        Assert.Equal(15, options.ClientMaxWindowBits);
        Assert.Equal(CompressionLevel.Fastest, options.Level);
        Assert.Equal(32, options.MinMessageSize);

        Assert.Throws<ArgumentOutOfRangeException>(() => options.ServerMaxWindowBits = 7);
        Assert.Throws<ArgumentOutOfRangeException>(() => options.ServerMaxWindowBits = 16);
        Assert.Throws<ArgumentOutOfRangeException>(() => options.ClientMaxWindowBits = 7);
        Assert.Throws<ArgumentOutOfRangeException>(() => options.ClientMaxWindowBits = 16);
        Assert.Throws<ArgumentOutOfRangeException>(() => options.MinMessageSize = -1);
        Assert.Throws<ArgumentOutOfRangeException>(() => options.Level = (CompressionLevel)4);
        Assert.Throws<ArgumentOutOfRangeException>(() => options.Level = (CompressionLevel)(-1));
        options.ServerMaxWindowBits = 8;
        options.ClientMaxWindowBits = 8;
        options.Level = CompressionLevel.NoCompression;
        options.MinMessageSize = 0;
        Assert.Equal(8, options.ServerMaxWindowBits);
        Assert.Equal(8, options.ClientMaxWindowBits);
        Assert.Equal(CompressionLevel.NoCompression, options.Level);
        Assert.Equal(0, options.MinMessageSize);
    }
}
