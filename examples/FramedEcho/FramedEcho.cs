using System;
using System.Buffers.Binary;

namespace NetServer.Examples.FramedEcho;

/// <summary>Length-prefixed frames (a 4-byte little-endian length, then the payload), echoed whole.</summary>
public sealed class FramedEcho : StreamProtocol
{
    public const int MaxFrame = 60_000;

    protected override int OnReceived(ReadOnlySpan<byte> data)
    {
        var consumed = 0;
        while (data.Length - consumed >= 4)
        {
            var length = BinaryPrimitives.ReadInt32LittleEndian(data[consumed..]);
            if (length is < 0 or > MaxFrame)
            {
                Connection!.Disconnect(); // bad input: close this connection only
                return data.Length;
            }

            if (data.Length - consumed - 4 < length)
                break; // a partial frame stays in the receive buffer until the rest arrives
            Echo(data.Slice(consumed + 4, length));
            consumed += 4 + length;
        }

        return consumed;
    }

    private void Echo(ReadOnlySpan<byte> payload)
    {
        using var frame = Connection!.StartSend(4 + payload.Length); // built in place, sent as one unit
        BinaryPrimitives.WriteInt32LittleEndian(frame.GetSpan(4), payload.Length);
        frame.Advance(4);
        frame.Write(payload);
        frame.Commit();
    }
}
