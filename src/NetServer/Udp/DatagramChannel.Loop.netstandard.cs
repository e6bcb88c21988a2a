using NetServer.Service;

namespace NetServer.Udp;

/// <summary>On the netstandard builds no loop polls sockets: a socket given a service keeps the default mode.</summary>
internal sealed partial class DatagramChannel
{
    private static PollRegistration? PinToLoop(UdpPeer owner, Socket socket) => null;

    private static void StartLoopReceive()
    {
    }

    private static DatagramSendStatus SendOnLoop(EndPoint target, ReadOnlySpan<byte> data, SendWaiter? completion) => DatagramSendStatus.Closed;

    private static void FreeLoopResources()
    {
    }
}
