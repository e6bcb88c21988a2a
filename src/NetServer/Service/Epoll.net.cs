using System.Runtime.InteropServices;

namespace NetServer.Service;

/// <summary>
/// The few Linux system calls the loops' poller needs (epoll and eventfd), bound with
/// <c>LibraryImport</c>: blittable signatures, errno kept for the caller. No binding package.
/// </summary>
internal static unsafe partial class Epoll
{
    private const string Libc = "libc";

    public const uint In = 0x001;
    public const uint Out = 0x004;
    public const uint Err = 0x008;
    public const uint Hup = 0x010;
    public const uint RdHup = 0x2000;
    public const uint Exclusive = 1u << 28; // EPOLLEXCLUSIVE: one waiting loop is woken, not all
    public const uint EdgeTriggered = 1u << 31;

    public const int CtlAdd = 1;
    public const int CtlDel = 2;

    public const int CloExec = 0x80000;   // EPOLL_CLOEXEC, EFD_CLOEXEC
    public const int NonBlocking = 0x800; // EFD_NONBLOCK

    public const int Eintr = 4;

    /// <summary>
    /// <c>struct epoll_event</c> is 12 bytes on x86-64 (packed) and 32-bit x86 (4-byte alignment of a 64-bit field), 16 bytes (naturally aligned)
    /// elsewhere; events are read and written through these offsets instead of a struct.
    /// </summary>
    public static readonly int EventSize = RuntimeInformation.ProcessArchitecture is Architecture.X64 or Architecture.X86 ? 12 : 16;

    private static readonly int DataOffset = EventSize == 12 ? 4 : 8;

    [LibraryImport(Libc, EntryPoint = "epoll_create1", SetLastError = true)]
    public static partial int Create(int flags);

    [LibraryImport(Libc, EntryPoint = "epoll_ctl", SetLastError = true)]
    private static partial int Control(int epfd, int op, int fd, byte* ev);

    [LibraryImport(Libc, EntryPoint = "epoll_wait", SetLastError = true)]
    public static partial int Wait(int epfd, byte* events, int maxEvents, int timeout);

    [LibraryImport(Libc, EntryPoint = "eventfd", SetLastError = true)]
    public static partial int EventFd(uint initval, int flags);

    [LibraryImport(Libc, EntryPoint = "read", SetLastError = true)]
    public static partial nint Read(int fd, byte* buffer, nint count);

    [LibraryImport(Libc, EntryPoint = "write", SetLastError = true)]
    public static partial nint Write(int fd, byte* buffer, nint count);

    [LibraryImport(Libc, EntryPoint = "close", SetLastError = true)]
    public static partial int Close(int fd);

    /// <summary>epoll_ctl ADD or DEL; returns 0 or errno.</summary>
    public static int Control(int epfd, int op, int fd, uint events, ulong data)
    {
        var ev = stackalloc byte[16];
        *(uint*)ev = events;
        *(ulong*)(ev + DataOffset) = data;
        return Control(epfd, op, fd, ev) == 0 ? 0 : Marshal.GetLastPInvokeError();
    }

    public static uint EventsAt(byte* events, int index) => *(uint*)(events + (index * EventSize));

    public static ulong DataAt(byte* events, int index) => *(ulong*)(events + (index * EventSize) + DataOffset);
}
