using System.Net;

namespace NetServer.P2P.Tests.Nat;

/// <summary>The relay's namespace on the public segment, with two public addresses (the second as a STUN server's alternate address).</summary>
internal sealed class LabRelay
{
    /// <summary>The port of the reflector's first socket on each address (STUN's).</summary>
    public const int ReflectorPort = 3478;

    /// <summary>The port of the reflector's second socket on <see cref="Address"/>.</summary>
    public const int ReflectorSecondPort = 3479;

    internal LabRelay(string ns, IPAddress address, IPAddress alternateAddress)
    {
        Namespace = ns;
        Address = address;
        AlternateAddress = alternateAddress;
    }

    /// <summary>The namespace to run the relay (and the reflector) in.</summary>
    public string Namespace { get; }

    /// <summary>The relay's address on the public segment, 203.0.113.1.</summary>
    public IPAddress Address { get; }

    /// <summary>A second address of the relay's namespace, 203.0.113.2.</summary>
    public IPAddress AlternateAddress { get; }

    /// <summary>The reflector's socket at <see cref="Address"/>:<see cref="ReflectorPort"/>.</summary>
    public IPEndPoint Reflector => new(Address, ReflectorPort);

    /// <summary>The reflector's socket at <see cref="Address"/>:<see cref="ReflectorSecondPort"/>: same address, another port.</summary>
    public IPEndPoint ReflectorOtherPort => new(Address, ReflectorSecondPort);

    /// <summary>The reflector's socket at <see cref="AlternateAddress"/>:<see cref="ReflectorPort"/>: another address.</summary>
    public IPEndPoint ReflectorAlternate => new(AlternateAddress, ReflectorPort);
}
