
namespace NetServer;

public partial class UdsClient
{
    /// <summary>A client for a Unix domain socket endpoint.</summary>
    public UdsClient(UnixDomainSocketEndPoint endpoint)
        : base(endpoint)
    {
    }
}
