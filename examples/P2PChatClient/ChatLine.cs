using ProtoBuf;

namespace NetServer.Examples.P2PChat;

/// <summary>message ChatLine { string text = 1; }: what the chat sends, to a peer, a room or everyone.</summary>
[ProtoContract]
public sealed class ChatLine
{
    [ProtoMember(1)]
    public string Text { get; set; } = string.Empty;
}

/// <summary>The chat's routes (envelope headers).</summary>
internal static class Routes
{
    public const string Say = "chat/say";
    public const string Ask = "chat/ask";
}
