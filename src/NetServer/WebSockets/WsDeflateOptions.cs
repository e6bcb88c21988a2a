using System.IO.Compression;

namespace NetServer;

/// <summary>
/// Settings of the WebSocket permessage-deflate extension (RFC 7692) for a server or a client: what
/// a client offers, what a server accepts, and how messages are compressed once it is agreed.
/// </summary>
/// <remarks>
/// <para>Compression uses <see cref="DeflateStream"/>, whose compressor always works with a 15-bit
/// (32 KiB) window and offers no control over it. So a server declines an offer that demands
/// <c>server_max_window_bits</c> below 15 (RFC 7692 lets a server decline any offer: the
/// connection then goes on uncompressed), and a client never offers <c>client_max_window_bits</c>,
/// so no server can impose a smaller window on it. Decompression has no such limit: a peer may
/// compress with any window from 8 to 15 bits.</para>
/// <para>Memory: a compressor with context takeover keeps about 220 to 370 KiB of native zlib state
/// per connection once it has compressed a message, a decompressor about 40 to 80 KiB (see
/// docs/websocket-deflate.md). Without context takeover that side's state is created for each
/// message and freed after it, which costs a few microseconds per message instead.</para>
/// <para>Compression mixes the bytes of a message (and, with context takeover, of earlier
/// messages) into the compressed size. If a message holds a secret next to data an attacker
/// chooses, and the attacker can see the compressed sizes, the secret can be guessed byte by byte
/// (as CRIME and BREACH did to TLS and HTTP compression). Leave compression off for such
/// traffic.</para>
/// </remarks>
public sealed class WsDeflateOptions
{
    private int _serverMaxWindowBits = MaxWindowBits;
    private int _clientMaxWindowBits = MaxWindowBits;
    private CompressionLevel _level = CompressionLevel.Fastest;
    private int _minMessageSize = 32;

    /// <summary>The smallest LZ77 window RFC 7692 allows: 2^8 bytes.</summary>
    public const int MinWindowBits = 8;

    /// <summary>The largest LZ77 window RFC 7692 allows, and the only one our compressor uses: 2^15 bytes.</summary>
    public const int MaxWindowBits = 15;

    /// <summary>
    /// Whether the server may keep its compression window from one message to the next (context
    /// takeover), so a message can refer back to earlier ones. Default true.
    /// </summary>
    /// <remarks>
    /// On a server: false resets the server's compressor for every message and says
    /// <c>server_no_context_takeover</c> in the response (less memory per idle connection, worse
    /// ratio on similar messages); true keeps the window unless the client's offer asks for
    /// <c>server_no_context_takeover</c>, which the server then honours. On a client: false offers
    /// <c>server_no_context_takeover</c>, asking the server to reset, and fails the connection if
    /// the server's response does not confirm it; true lets the server choose.
    /// </remarks>
    public bool ServerContextTakeover { get; set; } = true;

    /// <summary>
    /// Whether the client may keep its compression window from one message to the next (context
    /// takeover). Default true.
    /// </summary>
    /// <remarks>
    /// On a server: false says <c>client_no_context_takeover</c> in every response, so clients reset
    /// their compressor for every message and the server's decompressor can be freed between
    /// messages; true lets the client keep its window (unless the client offers
    /// <c>client_no_context_takeover</c> itself, which the server then confirms). On a client:
    /// false offers <c>client_no_context_takeover</c> and resets the client's compressor for every
    /// message; true keeps the window unless the server's response asks for a reset.
    /// </remarks>
    public bool ClientContextTakeover { get; set; } = true;

    /// <summary>
    /// The base-2 logarithm of the largest LZ77 window the server compresses with (8..15). Default
    /// 15.
    /// </summary>
    /// <remarks>
    /// On a client: a value below 15 is offered as <c>server_max_window_bits</c>, and a response
    /// that does not confirm it (with the same or a smaller value) fails the connection. It does
    /// not save the client memory: our decompressor always keeps a 15-bit window. On a server: our
    /// compressor cannot use a window below 15 bits, so a server set below 15 declines every offer
    /// (no compression) rather than break the promise; leave it at 15 on a server.
    /// </remarks>
    /// <exception cref="ArgumentOutOfRangeException">The value is not within 8..15.</exception>
    public int ServerMaxWindowBits
    {
        get => _serverMaxWindowBits;
        set => _serverMaxWindowBits = ValidateWindowBits(value, nameof(ServerMaxWindowBits));
    }

    /// <summary>
    /// The base-2 logarithm of the largest LZ77 window the client compresses with (8..15). Default
    /// 15.
    /// </summary>
    /// <remarks>
    /// On a server: a value below 15 is sent as <c>client_max_window_bits</c> to clients whose
    /// offer says they can limit their window (it has <c>client_max_window_bits</c>); a client
    /// that does not say so is still accepted and compresses with up to 15 bits, which our
    /// decompressor reads anyway. On a client: our compressor cannot use a window below 15 bits,
    /// so a client set below 15 offers no compression at all; leave it at 15 on a client.
    /// </remarks>
    /// <exception cref="ArgumentOutOfRangeException">The value is not within 8..15.</exception>
    public int ClientMaxWindowBits
    {
        get => _clientMaxWindowBits;
        set => _clientMaxWindowBits = ValidateWindowBits(value, nameof(ClientMaxWindowBits));
    }

    /// <summary>
    /// How hard our side compresses. Default <see cref="CompressionLevel.Fastest"/>: on JSON-like
    /// messages its output is 30 to 60% larger than <see cref="CompressionLevel.Optimal"/>'s
    /// (still 5 to 20% of the input) for 3 to 9 times less CPU, which on a server with many
    /// connections is usually the better trade. The peer decompresses any level.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException">The value is not a defined <see cref="CompressionLevel"/>.</exception>
    public CompressionLevel Level
    {
        get => _level;
        set
        {
            // Optimal, Fastest, NoCompression, SmallestSize (the last one on .NET 6 and later only).
            if ((uint)value > 3u)
                ThrowHelper.ThrowArgumentOutOfRange(nameof(Level), "The value is not a defined CompressionLevel.");
            _level = value;
        }
    }

    /// <summary>
    /// Messages shorter than this many bytes are sent uncompressed (RFC 7692 lets each message
    /// choose: the RSV1 bit says whether it is compressed). Default 32: below that the few bytes
    /// compression might save are not worth a compressor call, and without context takeover such
    /// messages grow rather than shrink. 0 compresses every message. Received messages are
    /// decompressed whatever their size.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException">The value is negative.</exception>
    public int MinMessageSize
    {
        get => _minMessageSize;
        set => _minMessageSize = ThrowHelper.ValidateOption(value, zeroAllowed: true, nameof(MinMessageSize));
    }

    private static int ValidateWindowBits(int value, string name)
    {
        if (value < MinWindowBits || value > MaxWindowBits)
            ThrowHelper.ThrowArgumentOutOfRange(name, "A window size is given in bits, from 8 to 15.");
        return value;
    }
}
