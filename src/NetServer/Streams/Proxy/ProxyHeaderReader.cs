using System.Buffers;

namespace NetServer;

/// <summary>
/// Reads the PROXY header off a just-accepted socket, asynchronously (no thread waits for a slow
/// peer) and without taking one byte past it: each step peeks at what has arrived, lets the parser
/// say how much of it is header, and takes exactly that. Whatever follows the header (a TLS
/// ClientHello, an HTTP request) stays in the socket for the connection's own reads.
/// </summary>
internal static class ProxyHeaderReader
{
    /// <summary>
    /// Reads one header. Returns the parsed header, or null with a failure saying
    /// why there is none (malformed, or the peer closed or reset first). It never throws for the
    /// peer's doing; a socket closed by another thread (the header timeout, a stop) ends it too.
    /// </summary>
    public static async Task<(ProxyInfo? Info, string? Failure)> ReadAsync(Socket socket)
    {
        var buffer = ArrayPool<byte>.Shared.Rent(ProxyHeader.V2FixedLength + ProxyHeader.DefaultMaxV2Length);
        var args = new SocketAwaitableEventArgs();
        try
        {
            var have = 0;
            while (true)
            {
                // Peek waits for at least one new byte: those seen before were taken, so it never spins.
                var peeked = await args.ReceiveAsync(socket, buffer, have, buffer.Length - have, SocketFlags.Peek).ConfigureAwait(false);
                if (Ended(peeked, out var ended))
                    return (null, ended);

                var status = ProxyHeader.Parse(buffer.AsSpan(0, have + peeked.BytesTransferred), out var consumed, out var info, out var reason);
                if (status == ProxyParseStatus.Invalid)
                    return (null, reason);

                // NeedMoreData: every byte so far is header (the parser never looks past it), so all are taken.
                var take = status == ProxyParseStatus.Done ? consumed - have : peeked.BytesTransferred;
                while (take > 0)
                {
                    var taken = await args.ReceiveAsync(socket, buffer, have, take, SocketFlags.None).ConfigureAwait(false);
                    if (Ended(taken, out ended))
                        return (null, ended);
                    have += taken.BytesTransferred;
                    take -= taken.BytesTransferred;
                }

                if (status == ProxyParseStatus.Done)
                    return (info, null);
            }
        }
        finally
        {
            args.Dispose();
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }

    private static bool Ended(SocketResult result, out string? why)
    {
        why = !result.IsSuccess
            ? $"PROXY protocol: the connection failed before a whole header arrived ({result.Error})"
            : result.BytesTransferred == 0
                ? "PROXY protocol: the peer closed the connection before a whole header arrived"
                : null;
        return why is not null;
    }
}
