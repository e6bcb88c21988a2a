using System.Collections.Generic;
using System.Globalization;
using NetServer.Http;

namespace NetServer.WebSockets;

/// <summary>
/// The permessage-deflate handshake (RFC 7692 sections 5 and 7.1) over Sec-WebSocket-Extensions
/// values: a server picks the first offer it can honour and answers it; a client builds its offer
/// and checks the server's answer. Pure text logic, once per connection.
/// </summary>
/// <remarks>
/// What a server declines, and what fails a client's connection, follows RFC 7692 section 5: an
/// unknown parameter, a repeated one, a value out of range or malformed, or a configuration we
/// cannot run. Our compressor only has a 15-bit window (see <see cref="WsDeflateOptions"/>), so a
/// server declines <c>server_max_window_bits</c> below 15 and a client never offers
/// <c>client_max_window_bits</c>. Names of extensions and parameters compare case-insensitively.
/// </remarks>
internal static partial class WsDeflateNegotiation
{
    /// <summary>The extension token.</summary>
    public const string ExtensionName = "permessage-deflate";

    private const int StackBytes = 256;

    // --- Server ---

    /// <summary>
    /// Picks the first permessage-deflate offer of the request that <paramref name="options"/> can
    /// honour, walking the Sec-WebSocket-Extensions field lines in order (a header may be repeated,
    /// and each line may hold several comma-separated offers).
    /// </summary>
    /// <param name="fieldValues">The request's Sec-WebSocket-Extensions field values, in order.</param>
    /// <param name="options">What the server allows.</param>
    /// <param name="agreed">The agreed parameters; <c>default</c> when false.</param>
    /// <param name="responseHeaderValue">The Sec-WebSocket-Extensions value to answer with; empty when false.</param>
    /// <returns>True when an offer was accepted; false when none was (no compression, not an error).</returns>
    public static bool TrySelect(IEnumerable<string> fieldValues, WsDeflateOptions options, out WsDeflateParameters agreed, out string responseHeaderValue)
    {
        if (fieldValues is null)
            ThrowHelper.ThrowArgumentNull(nameof(fieldValues));
        foreach (var value in fieldValues)
        {
            if (TrySelect(value, options, out agreed, out responseHeaderValue))
                return true;
        }

        agreed = default;
        responseHeaderValue = string.Empty;
        return false;
    }

    /// <summary>
    /// <see cref="TrySelect(IEnumerable{string}, WsDeflateOptions, out WsDeflateParameters, out string)"/>
    /// over one field value (or several joined with commas, which RFC 9110 5.3 makes equivalent).
    /// </summary>
    public static bool TrySelect(string? extensions, WsDeflateOptions options, out WsDeflateParameters agreed, out string responseHeaderValue)
    {
        if (string.IsNullOrEmpty(extensions))
        {
            agreed = default;
            responseHeaderValue = string.Empty;
            return false;
        }

        Span<byte> buffer = stackalloc byte[StackBytes];
        return TrySelect(ToBytes(extensions!, buffer), options, out agreed, out responseHeaderValue);
    }

    /// <summary>
    /// <see cref="TrySelect(IEnumerable{string}, WsDeflateOptions, out WsDeflateParameters, out string)"/>
    /// over the raw bytes of one field value (or several joined with commas).
    /// </summary>
    public static bool TrySelect(ReadOnlySpan<byte> extensions, WsDeflateOptions options, out WsDeflateParameters agreed, out string responseHeaderValue)
    {
        if (options is null)
            ThrowHelper.ThrowArgumentNull(nameof(options));
        agreed = default;
        responseHeaderValue = string.Empty;

        // Our compressor cannot keep a promise of a window below 15 bits (see WsDeflateOptions).
        if (options.ServerMaxWindowBits < WsDeflateOptions.MaxWindowBits)
            return false;

        var position = 0;
        while (HttpSyntax.NextListElement(extensions, ref position, out var element))
        {
            if (!IsDeflate(SplitName(element, out var rest)))
                continue; // another extension (or an empty element): not ours to judge
            if (!TryParseParameters(rest, inResponse: false, out var offer, out _))
                continue; // RFC 7692 5: decline an offer with an unknown, repeated or invalid parameter
            if (offer.ServerMaxWindowBits is not 0 and < WsDeflateOptions.MaxWindowBits)
                continue; // asks for a smaller compression window than we can use

            // client_max_window_bits: only a client that offered it may be told a limit (7.1.2.2).
            var clientBits = WsDeflateOptions.MaxWindowBits;
            if (offer.ClientMaxWindowBits != 0)
            {
                var offered = offer.ClientMaxWindowBits == ClientBitsWithoutValue ? WsDeflateOptions.MaxWindowBits : offer.ClientMaxWindowBits;
                clientBits = Math.Min(offered, options.ClientMaxWindowBits);
            }

            agreed = new WsDeflateParameters(
                serverNoContextTakeover: offer.ServerNoContextTakeover || !options.ServerContextTakeover,
                clientNoContextTakeover: offer.ClientNoContextTakeover || !options.ClientContextTakeover,
                serverMaxWindowBits: WsDeflateOptions.MaxWindowBits,
                clientMaxWindowBits: clientBits);

            // server_max_window_bits is accepted by answering it (7.1.2.1); here it can only be 15.
            responseHeaderValue = BuildResponse(agreed, answerServerBits: offer.ServerMaxWindowBits != 0, answerClientBits: clientBits < WsDeflateOptions.MaxWindowBits);
            return true;
        }

        return false;
    }

    private static string BuildResponse(in WsDeflateParameters agreed, bool answerServerBits, bool answerClientBits)
    {
        if (!agreed.ServerNoContextTakeover && !agreed.ClientNoContextTakeover && !answerServerBits && !answerClientBits)
            return ExtensionName;
        var response = ExtensionName;
        if (agreed.ServerNoContextTakeover)
            response += "; server_no_context_takeover";
        if (agreed.ClientNoContextTakeover)
            response += "; client_no_context_takeover";
        if (answerServerBits)
            response += "; server_max_window_bits=" + agreed.ServerMaxWindowBits.ToString(CultureInfo.InvariantCulture);
        if (answerClientBits)
            response += "; client_max_window_bits=" + agreed.ClientMaxWindowBits.ToString(CultureInfo.InvariantCulture);
        return response;
    }

    // --- Client ---

    /// <summary>
    /// The client's Sec-WebSocket-Extensions offer for <paramref name="options"/>, or an empty
    /// string when there is nothing we can offer (a <see cref="WsDeflateOptions.ClientMaxWindowBits"/>
    /// below 15, which our compressor cannot keep).
    /// </summary>
    public static string BuildOffer(WsDeflateOptions options)
    {
        if (options is null)
            ThrowHelper.ThrowArgumentNull(nameof(options));
        if (options.ClientMaxWindowBits < WsDeflateOptions.MaxWindowBits)
            return string.Empty;
        var offer = ExtensionName;
        if (!options.ServerContextTakeover)
            offer += "; server_no_context_takeover";
        if (!options.ClientContextTakeover)
            offer += "; client_no_context_takeover";
        if (options.ServerMaxWindowBits < WsDeflateOptions.MaxWindowBits)
            offer += "; server_max_window_bits=" + options.ServerMaxWindowBits.ToString(CultureInfo.InvariantCulture);
        return offer;
    }

    /// <summary>
    /// Checks the server's Sec-WebSocket-Extensions answer to <see cref="BuildOffer"/> as RFC 7692
    /// section 5 asks of a client: only an extension we offered, permessage-deflate at most once,
    /// no unknown or repeated parameter, values in range, no <c>client_max_window_bits</c> (never
    /// offered), and what we asked for (<c>server_no_context_takeover</c>, a
    /// <c>server_max_window_bits</c> limit) confirmed.
    /// </summary>
    /// <param name="responseHeaderValue">The response's Sec-WebSocket-Extensions value (several field lines joined with commas), or null when it has none.</param>
    /// <param name="options">The options the offer was built from.</param>
    /// <param name="agreed">The agreed parameters; <c>default</c> (not <see cref="WsDeflateParameters.IsEnabled"/>) when the server declined.</param>
    /// <param name="error">Why the response is invalid; empty when true.</param>
    /// <returns>True for a valid response, which may decline compression; false when the client must fail the connection.</returns>
    public static bool TryAccept(string? responseHeaderValue, WsDeflateOptions options, out WsDeflateParameters agreed, out string error)
    {
        if (options is null)
            ThrowHelper.ThrowArgumentNull(nameof(options));
        agreed = default;
        error = string.Empty;
        if (string.IsNullOrEmpty(responseHeaderValue))
            return true;

        Span<byte> buffer = stackalloc byte[StackBytes];
        var list = ToBytes(responseHeaderValue!, buffer);
        var offered = BuildOffer(options).Length != 0;
        var position = 0;
        while (HttpSyntax.NextListElement(list, ref position, out var element))
        {
            if (element.IsEmpty)
                continue;
            var name = SplitName(element, out var rest);
            if (!IsDeflate(name) || !offered)
                return Fail($"the server answered with the extension '{Text(name.IsEmpty ? element : name)}', which was not offered", out agreed, out error);
            if (agreed.IsEnabled)
                return Fail("the server answered with permessage-deflate more than once", out agreed, out error);
            if (!TryParseParameters(rest, inResponse: true, out var response, out var problem))
                return Fail("invalid permessage-deflate response: " + problem, out agreed, out error);
            if (response.ClientMaxWindowBits != 0)
                return Fail("the server answered with client_max_window_bits, which was not offered", out agreed, out error);
            if (!options.ServerContextTakeover && !response.ServerNoContextTakeover)
                return Fail("the server did not confirm server_no_context_takeover, which was asked for", out agreed, out error);
            if (options.ServerMaxWindowBits < WsDeflateOptions.MaxWindowBits && (response.ServerMaxWindowBits == 0 || response.ServerMaxWindowBits > options.ServerMaxWindowBits))
                return Fail($"the server did not confirm server_max_window_bits={options.ServerMaxWindowBits.ToString(CultureInfo.InvariantCulture)} or less, which was asked for", out agreed, out error);

            // A server may limit its own window unasked (7.1.2.1); our decompressor reads any window.
            agreed = new WsDeflateParameters(
                serverNoContextTakeover: response.ServerNoContextTakeover,
                clientNoContextTakeover: response.ClientNoContextTakeover || !options.ClientContextTakeover,
                serverMaxWindowBits: response.ServerMaxWindowBits == 0 ? WsDeflateOptions.MaxWindowBits : response.ServerMaxWindowBits,
                clientMaxWindowBits: WsDeflateOptions.MaxWindowBits);
        }

        return true;
    }

    private static bool Fail(string reason, out WsDeflateParameters agreed, out string error)
    {
        agreed = default;
        error = reason;
        return false;
    }
}
