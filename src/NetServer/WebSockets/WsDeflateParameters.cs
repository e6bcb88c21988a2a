namespace NetServer.WebSockets;

/// <summary>
/// The permessage-deflate parameters both ends agreed on in the handshake (RFC 7692 section 7.1),
/// or <c>default</c> (<see cref="IsEnabled"/> false) when compression was not agreed.
/// </summary>
internal readonly struct WsDeflateParameters
{
    public WsDeflateParameters(bool serverNoContextTakeover, bool clientNoContextTakeover, int serverMaxWindowBits, int clientMaxWindowBits)
    {
        ServerNoContextTakeover = serverNoContextTakeover;
        ClientNoContextTakeover = clientNoContextTakeover;
        ServerMaxWindowBits = serverMaxWindowBits;
        ClientMaxWindowBits = clientMaxWindowBits;
    }

    /// <summary>The server resets its compressor for every message.</summary>
    public bool ServerNoContextTakeover { get; }

    /// <summary>The client resets its compressor for every message.</summary>
    public bool ClientNoContextTakeover { get; }

    /// <summary>The largest window the server compresses with, in bits (8..15); 0 when not agreed.</summary>
    public int ServerMaxWindowBits { get; }

    /// <summary>The largest window the client compresses with, in bits (8..15); 0 when not agreed.</summary>
    public int ClientMaxWindowBits { get; }

    /// <summary>Whether permessage-deflate was agreed (false for <c>default</c>).</summary>
    public bool IsEnabled => ServerMaxWindowBits != 0;

    /// <summary>Whether our compressor must start every message with an empty window.</summary>
    public bool ResetsCompressor(bool isServer) => isServer ? ServerNoContextTakeover : ClientNoContextTakeover;

    /// <summary>
    /// Whether the peer's compressor starts every message with an empty window, so our decompressor
    /// may be reset (and freed) between messages (RFC 7692 7.2.2 allows it, never requires it).
    /// </summary>
    public bool ResetsDecompressor(bool isServer) => isServer ? ClientNoContextTakeover : ServerNoContextTakeover;

    /// <inheritdoc/>
    public override string ToString() =>
        !IsEnabled ? "(not agreed)" :
        $"server_no_context_takeover={ServerNoContextTakeover}, client_no_context_takeover={ClientNoContextTakeover}, server_max_window_bits={ServerMaxWindowBits}, client_max_window_bits={ClientMaxWindowBits}";
}
