using System.Security.Cryptography;

namespace NetServer.Http;

/// <summary>
/// The complete 200 response for one static file, head and body in one array, so a cached GET is
/// one write of an existing array. The head is laid out so the other answers reuse its pieces:
/// <code>
/// HTTP/1.1 200 OK
/// Content-Length: N
/// ETag: "..."                 | validators: also the 304 fields
/// Last-Modified: IMF-fixdate  |
/// Cache-Control: max-age=S    |
/// Content-Type: ...                  | fields: with the validators, also a 206's
/// Accept-Ranges: bytes               |
/// X-Content-Type-Options: nosniff    |
/// (empty line, then the body)
/// </code>
/// </summary>
internal sealed class StaticResponse
{
    /// <summary>Bytes of the quoted entity tag: 128 bits of the body's SHA-256 in hex, in quotes.</summary>
    public const int ETagLength = 34;

    private const int HashBytes = 16;

    private readonly int _validatorsStart;
    private readonly int _validatorsEnd;
    private readonly int _eTagStart;

    private StaticResponse(byte[] bytes, int headLength, int validatorsStart, int validatorsEnd, int eTagStart, long lastModified)
    {
        Bytes = bytes;
        HeadLength = headLength;
        _validatorsStart = validatorsStart;
        _validatorsEnd = validatorsEnd;
        _eTagStart = eTagStart;
        LastModified = lastModified;
    }

    /// <summary>The whole 200 response.</summary>
    public byte[] Bytes { get; }

    /// <summary>Bytes of the head, its empty line included; the body follows.</summary>
    public int HeadLength { get; }

    public int ContentLength => Bytes.Length - HeadLength;

    /// <summary>Last-Modified as Unix seconds (what the header says, to the second).</summary>
    public long LastModified { get; }

    /// <summary>The quoted strong entity tag.</summary>
    public ReadOnlySpan<byte> ETag => Bytes.AsSpan(_eTagStart, ETagLength);

    /// <summary>The ETag, Last-Modified and Cache-Control lines (each with its CRLF).</summary>
    public ReadOnlySpan<byte> Validators => Bytes.AsSpan(_validatorsStart, _validatorsEnd - _validatorsStart);

    /// <summary>Every header line after Content-Length (each with its CRLF), without the empty line.</summary>
    public ReadOnlySpan<byte> Fields => Bytes.AsSpan(_validatorsStart, HeadLength - 2 - _validatorsStart);

    /// <summary>Where the body goes while the file is read, before <see cref="Seal"/>.</summary>
    public Span<byte> Body => Bytes.AsSpan(HeadLength);

    /// <summary>
    /// A response for a file named <paramref name="fileName"/> of <paramref name="contentLength"/>
    /// bytes: the head written, the body still to be read into <see cref="Body"/>, then sealed.
    /// </summary>
    public static StaticResponse Allocate(string fileName, int contentLength, long lastModified, TimeSpan maxAge)
    {
        Span<byte> head = stackalloc byte[512];
        var writer = new HeadWriter(head);
        writer.Write("HTTP/1.1 200 OK\r\nContent-Length: ");
        writer.Write(contentLength);
        writer.Write("\r\n");
        var validatorsStart = writer.Length;
        writer.Write("ETag: ");
        var eTagStart = writer.Length;
        writer.Write(new string('0', ETagLength)); // a placeholder Seal overwrites
        writer.Write("\r\nLast-Modified: ");
        writer.WriteDate(lastModified);
        writer.Write("\r\nCache-Control: max-age=");
        writer.Write(maxAge <= TimeSpan.Zero ? 0 : (long)maxAge.TotalSeconds);
        writer.Write("\r\n");
        var validatorsEnd = writer.Length;
        writer.Write("Content-Type: ");
        writer.Write(HttpContentTypes.ForFile(fileName));
        writer.Write("\r\nAccept-Ranges: bytes\r\nX-Content-Type-Options: nosniff\r\n\r\n");
        if (writer.Overflowed)
            ThrowHelper.ThrowInvalidOperation("A static response head outgrew its buffer.");

        var bytes = new byte[writer.Length + contentLength];
        writer.Written.CopyTo(bytes);
        return new StaticResponse(bytes, writer.Length, validatorsStart, validatorsEnd, eTagStart, lastModified);
    }

    /// <summary>Writes the entity tag from the body now in place.</summary>
    public void Seal()
    {
        byte[] hash;
        using (var sha = IncrementalHash.CreateHash(HashAlgorithmName.SHA256))
        {
            sha.AppendData(Bytes, HeadLength, ContentLength);
            hash = sha.GetHashAndReset();
        }

        var tag = Bytes.AsSpan(_eTagStart, ETagLength);
        tag[0] = (byte)'"';
        for (var i = 0; i < HashBytes; i++)
        {
            tag[1 + (2 * i)] = Hex(hash[i] >> 4);
            tag[2 + (2 * i)] = Hex(hash[i] & 0xF);
        }

        tag[ETagLength - 1] = (byte)'"';
    }

    private static byte Hex(int nibble) => (byte)(nibble < 10 ? '0' + nibble : 'a' + nibble - 10);
}
