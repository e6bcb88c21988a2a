using System;
using System.Threading.Tasks;

namespace NetServer.P2P.NatAgent;

/// <summary>What the agent does in one mode: its sockets, its start lines and its commands.</summary>
internal interface IAgentMode : IAsyncDisposable
{
    /// <summary>Binds what the mode needs and prints its start lines (before <c>ready</c>).</summary>
    Task StartAsync();

    /// <summary>Runs one command line (<paramref name="words"/>[0] is the command) and prints exactly one reply line.</summary>
    Task RunAsync(string[] words);
}
