namespace NetServer;

/// <summary>
/// The WebSocket close status codes (RFC 6455 7.4.1 and the IANA "WebSocket Close Code Number"
/// registry), and which of them may travel in a Close frame.
/// </summary>
/// <remarks>
/// <see cref="NoStatus"/>, <see cref="Abnormal"/> and <see cref="TlsHandshake"/> are never sent: they
/// only report locally that a Close frame had no code, that the connection ended without one, or
/// that the TLS handshake failed. Every other constant here may be sent and received, and so may the
/// codes 3000-3999 (registered with IANA by libraries and frameworks) and 4000-4999 (private use).
/// </remarks>
public static class WsCloseStatus
{
    /// <summary>1000: the purpose of the connection was fulfilled. May be sent.</summary>
    public const int Normal = 1000;

    /// <summary>1001: the endpoint is going away (a server shutting down, a page navigated away from). May be sent.</summary>
    public const int GoingAway = 1001;

    /// <summary>1002: the peer broke the protocol. May be sent.</summary>
    public const int ProtocolError = 1002;

    /// <summary>1003: a message of a type the endpoint cannot accept (binary where only text is expected). May be sent.</summary>
    public const int UnsupportedData = 1003;

    /// <summary>1005: the Close frame carried no status code. Reported locally only, never sent.</summary>
    public const int NoStatus = 1005;

    /// <summary>1006: the connection ended without a Close frame. Reported locally only, never sent.</summary>
    public const int Abnormal = 1006;

    /// <summary>1007: a message's data did not match its type (a text message that is not valid UTF-8). May be sent.</summary>
    public const int InvalidPayload = 1007;

    /// <summary>1008: a message broke the endpoint's policy (the generic code when no other fits). May be sent.</summary>
    public const int PolicyViolation = 1008;

    /// <summary>1009: a message too big to process. May be sent.</summary>
    public const int MessageTooBig = 1009;

    /// <summary>1010: the client needed an extension the server did not agree to (sent by a client). May be sent.</summary>
    public const int MandatoryExtension = 1010;

    /// <summary>1011: the server met an unexpected condition that kept it from answering. May be sent.</summary>
    public const int InternalError = 1011;

    /// <summary>1012: the server is restarting (IANA registry). May be sent.</summary>
    public const int ServiceRestart = 1012;

    /// <summary>1013: the server is overloaded; try again later (IANA registry). May be sent.</summary>
    public const int TryAgainLater = 1013;

    /// <summary>1014: a gateway or proxy got an invalid answer from upstream (IANA registry). May be sent.</summary>
    public const int BadGateway = 1014;

    /// <summary>1015: the TLS handshake failed. Reported locally only, never sent.</summary>
    public const int TlsHandshake = 1015;

    /// <summary>
    /// True when <paramref name="status"/> may appear in a Close frame: 1000-1003, 1007-1014 and
    /// 3000-4999. False for 1004 (reserved), 1005, 1006 and 1015 (local only), for codes below 1000
    /// (unused) and 1016-2999 (reserved for future RFCs and extensions) and 5000 and above.
    /// </summary>
    /// <remarks>
    /// 1012-1014 are not in RFC 6455 but registered with IANA since 2012 and sent by servers in the
    /// field, so a received one is accepted rather than treated as a protocol error. The Autobahn
    /// testsuite agrees: its invalid-code cases (7.9.x) are 0, 999, 1004, 1005, 1006, 1016, 1100,
    /// 2000 and 2999 (older versions also listed 1012-1014).
    /// </remarks>
    public static bool IsValidOnWire(int status) =>
        status is (>= 1000 and <= 1003) or (>= 1007 and <= 1014) or (>= 3000 and <= 4999);
}
