using System.IO;
using System.Runtime.InteropServices;
using System.Text;

namespace NetServer.Internal;

/// <summary>
/// Handles the file a Unix domain socket listener binds. A process that dies without closing
/// its listener leaves the file behind, and bind() then fails with "address in use" although
/// nobody listens. Before binding, a leftover file is removed, but only when it really is a
/// socket and a connect to it is refused; a live listener or any other kind of file is left alone.
/// </summary>
internal static class UnixSocketFile
{
    private const int FileTypeMask = 0xF000; // S_IFMT
    private const int SocketFileType = 0xC000; // S_IFSOCK

    /// <summary>The filesystem path of a Unix endpoint, or null for an abstract (or unnamed) one.</summary>
    public static string? PathOf(EndPoint endpoint)
    {
        var path = endpoint.ToString();
        return string.IsNullOrEmpty(path) || path![0] is '\0' or '@' ? null : path;
    }

    /// <summary>Removes a stale socket file at <paramref name="endpoint"/>'s path, if there is one.</summary>
    /// <exception cref="SocketException">Another listener is live at the path (AddressAlreadyInUse).</exception>
    /// <exception cref="IOException">The path exists and is not a socket.</exception>
    public static void RemoveIfStale(EndPoint endpoint)
    {
        var path = PathOf(endpoint);
        if (path is null || !File.Exists(path))
            return;

        var isSocket = IsSocketFile(path);
        if (isSocket == false)
            throw new IOException($"Cannot listen on '{path}': the path exists and is not a socket.");

        using (var probe = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified))
        {
            try
            {
                probe.Connect(endpoint);
            }
            catch (SocketException e) when (e.SocketErrorCode == SocketError.ConnectionRefused && isSocket == true)
            {
                // Nobody accepts there: the file is a leftover of a process that is gone.
                File.Delete(path);
                return;
            }
        }

        throw new SocketException((int)SocketError.AddressAlreadyInUse);
    }

    /// <summary>Removes the socket file this process bound (best effort: the runtime may have removed it already).</summary>
    public static void Remove(EndPoint endpoint)
    {
        var path = PathOf(endpoint);
        if (path is not null && IsSocketFile(path) == true)
            File.Delete(path);
    }

    /// <summary>True/false when the file type can be read on this platform; null when it cannot.</summary>
    private static bool? IsSocketFile(string path)
    {
        // lstat's st_mode offset differs by ABI; only the layouts known here are read.
        int modeOffset;
        if (!RuntimeInformation.IsOSPlatform(OSPlatform.Linux))
            return null;
        if (RuntimeInformation.ProcessArchitecture == Architecture.X64)
            modeOffset = 24;
        else if (RuntimeInformation.ProcessArchitecture == Architecture.Arm64)
            modeOffset = 16;
        else
            return null;

        var stat = new byte[256];
        try
        {
            if (LStat(path, stat) != 0)
                return null;
        }
        catch (Exception e) when (e is DllNotFoundException or EntryPointNotFoundException)
        {
            return null; // not glibc (musl names its library differently): the type stays unknown
        }

        var mode = BitConverter.ToInt32(stat, modeOffset);
        return (mode & FileTypeMask) == SocketFileType;
    }

    private static int LStat(string path, byte[] buffer)
    {
        // The path goes over as NUL-terminated UTF-8 bytes, so no string marshalling is involved.
        var bytes = new byte[Encoding.UTF8.GetByteCount(path) + 1];
        Encoding.UTF8.GetBytes(path, 0, path.Length, bytes, 0);
        try
        {
            return LStat(bytes, buffer);
        }
        catch (EntryPointNotFoundException)
        {
            // glibc before 2.33 exports only the versioned __lxstat (version 1 on x64, 0 on arm64).
            return LxStat(RuntimeInformation.ProcessArchitecture == Architecture.X64 ? 1 : 0, bytes, buffer);
        }
    }

    [DllImport("libc.so.6", EntryPoint = "lstat", SetLastError = true)]
    private static extern int LStat(byte[] path, byte[] buffer);

    [DllImport("libc.so.6", EntryPoint = "__lxstat", SetLastError = true)]
    private static extern int LxStat(int version, byte[] path, byte[] buffer);
}
