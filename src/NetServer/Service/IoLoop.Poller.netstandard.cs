using NetServer.Service;
using System.IO;

namespace NetServer;

/// <summary>On the netstandard builds the loops run posted work only; connections keep the default transport.</summary>
public sealed partial class IoLoop
{
    [System.Diagnostics.CodeAnalysis.SuppressMessage("Performance", "CA1822", Justification = "Instance member on net10.0.")]
    internal string? PollerFailure => "the loops' own socket transport needs the net10.0 build on Linux; this service's connections use the default transport";

    private static bool HasPoller => false;

    [System.Diagnostics.CodeAnalysis.SuppressMessage("Performance", "CA1822", Justification = "Instance member on net10.0.")]
    internal bool PollsSockets => false;

    private static void StartPoller()
    {
    }

    private static void WakePoller()
    {
    }

    private static int PollOnce(int timeoutMilliseconds) => 0;

    private static void AbandonPolled()
    {
    }

    private static void StopPoller()
    {
    }

    [System.Diagnostics.CodeAnalysis.SuppressMessage("Performance", "CA1822", Justification = "Instance member on net10.0.")]
    internal PollRegistration? Register(Socket socket, IPollOwner owner, bool inline, bool listener = false) => null;

    internal static void Unregister(PollRegistration registration) => registration.Close();

    [System.Diagnostics.CodeAnalysis.SuppressMessage("Performance", "CA1822", Justification = "Instance member on net10.0.")]
    internal void FailPollerForTests()
    {
    }

    /// <summary>The stream a secure layer runs over (no connection is pinned to a polling loop here).</summary>
    internal static Stream TransportStream(Socket socket, PollRegistration? registration) => new NetworkStream(socket, ownsSocket: false);
}
