using System;
using System.Buffers;
using System.Collections.Generic;
using System.Linq;
using System.Text;
using NetServer.Messaging;
using NetServer.Protobuf;

namespace NetServer.Fuzz;

/// <summary>Byte-message framing and the protobuf envelope codec.</summary>
internal static class MessageTargets
{
    /// <summary>
    /// The first byte picks the size limit (1 to 32768 bytes) and the retention limit (16 bytes or
    /// 4 KiB: short enough that long messages are reassembled); the rest is the stream. Rules:
    /// consumed within the input; messages within the limit; an error with a reason; bytes left
    /// unconsumed never more than the retention limit; the same messages however it was cut.
    /// </summary>
    public static void Framing(ReadOnlySpan<byte> input)
    {
        if (input.IsEmpty)
            return;
        var maxMessageSize = 1 << (input[0] & 15);
        var retentionLimit = (input[0] & 16) != 0 ? 16 : 4096;
        var stream = input.Slice(1);
        string? whole = null;
        foreach (var cuts in Cuts.Of(stream))
        {
            var outcome = ReadMessages(stream, cuts, maxMessageSize, retentionLimit);
            whole ??= outcome;
            Invariant.Equal(whole, outcome, "messages");
        }
    }

    private static string ReadMessages(ReadOnlySpan<byte> stream, int[] cuts, int maxMessageSize, int retentionLimit)
    {
        var reader = default(MessageReader);
        var messages = new StringBuilder();
        var start = 0;
        var available = 0;
        try
        {
            foreach (var cut in cuts)
            {
                available += cut;
                while (true)
                {
                    var status = reader.Read(stream.Slice(start, available - start), maxMessageSize, retentionLimit, out var message, out var consumed);
                    Invariant.Check(consumed >= 0 && consumed <= available - start, "a read consumes within its input");
                    start += consumed;
                    if (status == MessageReadStatus.InvalidLength)
                    {
                        Invariant.Check(!string.IsNullOrEmpty(reader.Error), "an invalid length says why");
                        return messages.Append("invalid").ToString();
                    }

                    if (status == MessageReadStatus.NeedMoreData)
                    {
                        Invariant.Check(available - start <= Math.Max(retentionLimit, MessageReader.HeaderSize), "unconsumed bytes stay within the retention limit");
                        Invariant.Check(reader.AssemblyCapacity <= 2 * Math.Max(MessageReader.FirstAssemblyBlock, maxMessageSize), "reassembly memory bounded by the message size");
                        break;
                    }

                    Invariant.Check(message.Length <= maxMessageSize, "a message within the size limit");
                    messages.Append(Convert.ToHexString(message)).Append('|');
                }
            }

            return messages.ToString();
        }
        finally
        {
            reader.Reset();
        }
    }

    /// <summary>
    /// An envelope that parses is rebuilt (ToEnvelope), written again (EnvelopeCodec) and parsed
    /// again into the same fields; one that does not parse says why.
    /// </summary>
    public static void Envelope(ReadOnlySpan<byte> input)
    {
        if (!ProtoMessage.TryParse(input, out var message, out var error))
        {
            Invariant.Check(!string.IsNullOrEmpty(error), "a refused envelope says why");
            return;
        }

        Invariant.Check(message.PropertyCount <= ProtoMessage.MaxProperties, "properties within MaxProperties");
        var first = Describe(message);
        var buffer = new ArrayBufferWriter<byte>();
        EnvelopeCodec.Write(buffer, message.ToEnvelope());
        Invariant.Check(ProtoMessage.TryParse(buffer.WrittenSpan, out var again, out error), $"a written envelope parses: {error}");
        Invariant.Equal(first, Describe(again), "envelope fields after a round trip");
    }

    private static string Describe(ProtoMessage message)
    {
        var text = new StringBuilder()
            .Append(message.Id).Append(' ').Append(message.From).Append(' ').Append(message.To).Append(' ')
            .Append(message.Header).Append(' ').Append(message.Timestamp?.ToUnixTimeMilliseconds()).Append(' ')
            .Append(message.RequestId).Append(' ').Append(message.Flags).Append(' ').Append(Convert.ToHexString(message.Payload));
        var properties = new List<string>();
        foreach (var property in message.Properties)
            properties.Add(property.Key + "=" + property.Value);
        return text.Append(' ').Append(string.Join(",", properties.Select(p => p.Replace(",", "\\,", StringComparison.Ordinal)))).ToString();
    }
}
