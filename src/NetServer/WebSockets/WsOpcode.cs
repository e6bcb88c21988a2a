namespace NetServer.WebSockets;

/// <summary>
/// The frame opcodes of RFC 6455 5.2. A header read off the wire may carry any 4-bit value, a
/// reserved one included: <see cref="WsOpcodes.IsKnown"/> tells them apart.
/// </summary>
internal enum WsOpcode : byte
{
    /// <summary>A further fragment of the message in progress.</summary>
    Continuation = 0,

    /// <summary>The first frame of a text (UTF-8) message.</summary>
    Text = 1,

    /// <summary>The first frame of a binary message.</summary>
    Binary = 2,

    /// <summary>The closing handshake: an optional status code and UTF-8 reason.</summary>
    Close = 8,

    /// <summary>A keep-alive probe the peer must answer with a <see cref="Pong"/>.</summary>
    Ping = 9,

    /// <summary>The answer to a <see cref="Ping"/>, or an unsolicited heartbeat.</summary>
    Pong = 10,
}

/// <summary>Questions about opcodes, the reserved ones included.</summary>
internal static class WsOpcodes
{
    /// <summary>
    /// True for control frames (opcodes 8 to 15, RFC 6455 5.5): never fragmented, at most 125
    /// payload bytes, allowed between the fragments of a message.
    /// </summary>
    public static bool IsControl(WsOpcode opcode) => ((byte)opcode & 0x8) != 0;

    /// <summary>True for the six opcodes RFC 6455 defines; the others (3-7, 11-15) are reserved.</summary>
    public static bool IsKnown(byte opcode) => opcode <= 2 || (uint)(opcode - 8) <= 2;
}
