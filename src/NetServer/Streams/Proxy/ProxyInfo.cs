using System.Collections.Generic;
using System.Text;

namespace NetServer;

/// <summary>
/// What a PROXY protocol header said about the connection: the real client (source) and the
/// address it connected to (destination), and for v2 the TLVs the proxy added. A session behind a
/// trusted proxy finds it in <see cref="StreamSession.Proxy"/> (see <c>OptionProxyProtocol</c> on the server).
/// </summary>
public sealed class ProxyInfo
{
    /// <summary>TLV type of the application protocol negotiated by the proxy (ALPN).</summary>
    public const byte TlvAlpn = 0x01;

    /// <summary>TLV type of the host name the client asked for (SNI / authority).</summary>
    public const byte TlvAuthority = 0x02;

    /// <summary>TLV type of an opaque unique connection id.</summary>
    public const byte TlvUniqueId = 0x05;

    /// <summary>TLV type of the TLS details the proxy terminated.</summary>
    public const byte TlvSsl = 0x20;

    private static readonly IReadOnlyList<ProxyTlv> s_noTlvs = Array.Empty<ProxyTlv>();

    internal ProxyInfo(
        int version,
        bool isLocal,
        IPEndPoint? source,
        IPEndPoint? destination,
        string? sourcePath,
        string? destinationPath,
        IReadOnlyList<ProxyTlv>? tlvs)
    {
        Version = version;
        IsLocal = isLocal;
        Source = source;
        Destination = destination;
        SourcePath = sourcePath;
        DestinationPath = destinationPath;
        Tlvs = tlvs ?? s_noTlvs;
    }

    /// <summary>1 for the text header, 2 for the binary one.</summary>
    public int Version { get; }

    /// <summary>
    /// True when the header carries no client address: a v2 LOCAL command (the proxy's own
    /// health check) or v1 <c>PROXY UNKNOWN</c>. The connection's own addresses then stand.
    /// </summary>
    public bool IsLocal { get; }

    /// <summary>The real client address and port (an IPv4-mapped IPv6 address given as IPv4); null for LOCAL/UNKNOWN and Unix addresses.</summary>
    public IPEndPoint? Source { get; }

    /// <summary>The address and port the client connected to on the proxy; null as for <see cref="Source"/>.</summary>
    public IPEndPoint? Destination { get; }

    /// <summary>The client's Unix socket path (v2 AF_UNIX); otherwise null.</summary>
    public string? SourcePath { get; }

    /// <summary>The Unix socket path the client connected to (v2 AF_UNIX); otherwise null.</summary>
    public string? DestinationPath { get; }

    /// <summary>All v2 TLVs in header order (empty for v1).</summary>
    public IReadOnlyList<ProxyTlv> Tlvs { get; }

    /// <summary>The ALPN TLV as text (e.g. <c>h2</c>), or null.</summary>
    public string? Alpn => TlvText(TlvAlpn);

    /// <summary>The AUTHORITY TLV (host name the client asked for) as text, or null.</summary>
    public string? Authority => TlvText(TlvAuthority);

    /// <summary>The UNIQUE_ID TLV bytes (a copy), or null.</summary>
    public byte[]? UniqueId => Find(TlvUniqueId)?.Value.ToArray();

    /// <summary>The first TLV of a type, or null.</summary>
    /// <param name="type">The TLV type (for example <see cref="TlvAlpn"/>).</param>
    public ProxyTlv? Find(byte type)
    {
        foreach (ProxyTlv tlv in Tlvs)
        {
            if (tlv.Type == type)
            {
                return tlv;
            }
        }

        return null;
    }

    private string? TlvText(byte type)
    {
        ProxyTlv? tlv = Find(type);
        return tlv is null ? null : Encoding.UTF8.GetString(tlv.Value.Value.ToArray());
    }
}
