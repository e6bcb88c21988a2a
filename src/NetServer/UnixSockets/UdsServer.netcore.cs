
namespace NetServer;

public partial class UdsServer
{
    /// <summary>A server on a Unix domain socket endpoint.</summary>
    public UdsServer(UnixDomainSocketEndPoint endpoint)
        : base(endpoint)
    {
    }
}
