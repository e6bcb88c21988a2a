using System.Runtime.InteropServices;

namespace NetServer.Udp;

/// <summary>
/// The headers of up to <see cref="Capacity"/> datagrams for one <c>recvmmsg</c> or <c>sendmmsg</c>
/// (Linux, bound with <c>LibraryImport</c> as the loops' epoll calls are): one <c>mmsghdr</c>, one
/// <c>iovec</c> and one address slot per datagram, allocated once in native memory and reused for
/// the socket's life, so a batch moves no managed object. The caller points each slot at memory it
/// keeps pinned for the call.
/// </summary>
/// <remarks>Not thread-safe: one receiver, or the one flusher, uses a batch at a time.</remarks>
internal sealed unsafe partial class DatagramBatch : IDisposable
{
    /// <summary>Room for any socket address (<c>sizeof(struct sockaddr_storage)</c>).</summary>
    public const int AddressSize = 128;

    private const string Libc = "libc";
    private const int DontWait = 0x40; // MSG_DONTWAIT: the socket itself stays blocking for the compatible blocking calls

    private MessageHeader* _headers;
    private IoVector* _vectors;
    private byte* _addresses;

    public DatagramBatch(int capacity)
    {
        Capacity = capacity;
        _headers = (MessageHeader*)NativeMemory.AllocZeroed((nuint)(capacity * sizeof(MessageHeader)));
        _vectors = (IoVector*)NativeMemory.AllocZeroed((nuint)(capacity * sizeof(IoVector)));
        _addresses = (byte*)NativeMemory.AllocZeroed((nuint)(capacity * AddressSize));
        for (var i = 0; i < capacity; i++)
        {
            _headers[i].Header.Vectors = &_vectors[i];
            _headers[i].Header.VectorCount = 1;
            _headers[i].Header.Name = _addresses + (i * AddressSize);
        }
    }

    public int Capacity { get; }

    /// <summary>Points slot <paramref name="index"/> at <paramref name="length"/> bytes (receive: room for them; send: the datagram).</summary>
    public void SetData(int index, byte* data, int length)
    {
        _vectors[index].Base = data;
        _vectors[index].Length = (nuint)length;
    }

    /// <summary>Before a send: the slot's target address (a native <c>sockaddr</c>, as <see cref="SocketAddress"/> holds it on .NET 8 and later).</summary>
    public void SetAddress(int index, ReadOnlySpan<byte> address)
    {
        address.CopyTo(new Span<byte>(_addresses + (index * AddressSize), AddressSize));
        _headers[index].Header.NameLength = (uint)address.Length;
    }

    /// <summary>After a receive: the sender of slot <paramref name="index"/> (a native <c>sockaddr</c>).</summary>
    public ReadOnlySpan<byte> AddressAt(int index) =>
        new(_addresses + (index * AddressSize), (int)Math.Min(_headers[index].Header.NameLength, AddressSize));

    /// <summary>After a receive or send: the bytes slot <paramref name="index"/> moved (a datagram the kernel cut to its buffer fills it).</summary>
    public int LengthAt(int index) => (int)_headers[index].Length;

    /// <summary>
    /// Receives up to <paramref name="count"/> datagrams into slots 0 to count-1 without waiting.
    /// Returns how many arrived, or -1 with <paramref name="errno"/> (EAGAIN: none waiting).
    /// </summary>
    public int Receive(SafeHandle socket, int count, out int errno)
    {
        for (var i = 0; i < count; i++)
        {
            _headers[i].Header.NameLength = AddressSize;
            _headers[i].Header.Flags = 0;
        }

        return Call(socket, count, 0, send: false, out errno);
    }

    /// <summary>Sends the datagrams of slots <paramref name="first"/> to first+count-1 without waiting: how many the kernel took, or -1 with <paramref name="errno"/>.</summary>
    public int Send(SafeHandle socket, int first, int count, out int errno) => Call(socket, count, first, send: true, out errno);

    private int Call(SafeHandle socket, int count, int first, bool send, out int errno)
    {
        var added = false;
        try
        {
            // A reference on the handle for the call: a close racing it cannot free the descriptor's number for reuse meanwhile.
            socket.DangerousAddRef(ref added);
            var fd = (int)socket.DangerousGetHandle();
            var result = send
                ? SendMany(fd, _headers + first, (uint)count, DontWait)
                : ReceiveMany(fd, _headers, (uint)count, DontWait, null);
            errno = result < 0 ? Marshal.GetLastPInvokeError() : 0;
            return result;
        }
        catch (ObjectDisposedException)
        {
            errno = Errno.BadDescriptor;
            return -1;
        }
        finally
        {
            if (added)
                socket.DangerousRelease();
        }
    }

    public void Dispose()
    {
        NativeMemory.Free(_headers);
        NativeMemory.Free(_vectors);
        NativeMemory.Free(_addresses);
        _headers = null;
        _vectors = null;
        _addresses = null;
    }

    [LibraryImport(Libc, EntryPoint = "recvmmsg", SetLastError = true)]
    private static partial int ReceiveMany(int fd, MessageHeader* messages, uint count, int flags, void* timeout);

    [LibraryImport(Libc, EntryPoint = "sendmmsg", SetLastError = true)]
    private static partial int SendMany(int fd, MessageHeader* messages, uint count, int flags);

    // struct msghdr and struct mmsghdr: sequential with natural alignment, which is the C layout on
    // Linux for 64- and 32-bit targets (musl's int msg_iovlen with its padding reads the same, zeroed).
    [StructLayout(LayoutKind.Sequential)]
    private struct Header
    {
        public byte* Name;
        public uint NameLength;
        public IoVector* Vectors;
        public nuint VectorCount;
        public void* Control;
        public nuint ControlLength;
        public int Flags;
    }

    [StructLayout(LayoutKind.Sequential)]
    private struct MessageHeader
    {
        public Header Header;
        public uint Length;
    }

    [StructLayout(LayoutKind.Sequential)]
    private struct IoVector
    {
        public byte* Base;
        public nuint Length;
    }
}

/// <summary>The Linux errno values the datagram loop tells apart, and what each means as a <see cref="SocketError"/>.</summary>
internal static class Errno
{
    public const int Interrupted = 4;
    public const int BadDescriptor = 9;
    public const int WouldBlock = 11;

    /// <summary>
    /// The socket error for <paramref name="errno"/> (the values of Linux's generic errno table, shared
    /// by x86-64 and arm64), as the runtime's own sockets report it (its SocketErrorPal), so a failure
    /// reads the same on the loops as in the default mode. Besides the calls' own errors (recvmmsg(2),
    /// sendmmsg(2)), a datagram socket reports the ICMP errors of earlier datagrams and the shutdown of
    /// either side. ENOMEM, which the runtime leaves generic, reads as a lack of buffers.
    /// </summary>
    public static SocketError ToSocketError(int errno) => errno switch
    {
        1 or 13 => SocketError.AccessDenied,        // EPERM (a firewall rule), EACCES (broadcast not enabled)
        2 => SocketError.AddressNotAvailable,       // ENOENT
        4 => SocketError.Interrupted,               // EINTR
        6 => SocketError.HostNotFound,              // ENXIO (the runtime's closest match)
        9 or 125 => SocketError.OperationAborted,   // EBADF (closed under the call), ECANCELED
        11 => SocketError.WouldBlock,               // EAGAIN
        12 or 105 => SocketError.NoBufferSpaceAvailable, // ENOMEM, ENOBUFS
        14 => SocketError.Fault,                    // EFAULT
        22 => SocketError.InvalidArgument,          // EINVAL (a port 0 target among them)
        23 or 24 => SocketError.TooManyOpenSockets, // ENFILE, EMFILE
        32 => SocketError.Shutdown,                 // EPIPE: the send side was shut down
        61 => SocketError.NoData,                   // ENODATA
        88 => SocketError.NotSocket,                // ENOTSOCK
        89 => SocketError.DestinationAddressRequired, // EDESTADDRREQ
        90 => SocketError.MessageSize,              // EMSGSIZE
        91 => SocketError.ProtocolType,             // EPROTOTYPE
        92 => SocketError.ProtocolOption,           // ENOPROTOOPT (ICMP protocol unreachable)
        93 => SocketError.ProtocolNotSupported,     // EPROTONOSUPPORT
        94 => SocketError.SocketNotSupported,       // ESOCKTNOSUPPORT
        95 => SocketError.OperationNotSupported,    // EOPNOTSUPP (ENOTSUP on Linux)
        96 => SocketError.ProtocolFamilyNotSupported, // EPFNOSUPPORT
        97 => SocketError.AddressFamilyNotSupported, // EAFNOSUPPORT
        98 => SocketError.AddressAlreadyInUse,      // EADDRINUSE
        99 => SocketError.AddressNotAvailable,      // EADDRNOTAVAIL
        100 => SocketError.NetworkDown,             // ENETDOWN
        101 => SocketError.NetworkUnreachable,      // ENETUNREACH
        102 => SocketError.NetworkReset,            // ENETRESET
        103 => SocketError.ConnectionAborted,       // ECONNABORTED
        104 => SocketError.ConnectionReset,         // ECONNRESET
        106 => SocketError.IsConnected,             // EISCONN
        107 => SocketError.NotConnected,            // ENOTCONN
        108 => SocketError.Disconnecting,           // ESHUTDOWN
        110 => SocketError.TimedOut,                // ETIMEDOUT
        111 => SocketError.ConnectionRefused,       // ECONNREFUSED
        112 => SocketError.HostDown,                // EHOSTDOWN
        113 => SocketError.HostUnreachable,         // EHOSTUNREACH
        114 => SocketError.AlreadyInProgress,       // EALREADY
        115 => SocketError.InProgress,              // EINPROGRESS
        _ => SocketError.SocketError,
    };
}
