using System;
using System.IO;
using System.Threading.Tasks;

namespace NetServer.Protobuf.Requests;

/// <summary>Reads what the awaiting caller gets out of a reply, inside the receive hook (the reply's bytes are valid only there).</summary>
internal delegate T ReplyReader<T>(in ProtoMessage reply);

/// <summary>The awaited side of one request, whatever its result type.</summary>
internal interface IReplyCompletion
{
    void Complete(in ProtoMessage reply);

    void Fail(Exception error);
}

/// <summary>
/// The task a request's caller awaits. Its continuations run on the thread pool, never inline in
/// the receive hook that completes it (an awaiter that sends again must not block the connection's loop).
/// </summary>
internal sealed class ReplyCompletion<T>(ReplyReader<T> reader) : TaskCompletionSource<T>(TaskCreationOptions.RunContinuationsAsynchronously), IReplyCompletion
{
    public void Complete(in ProtoMessage reply)
    {
        T value;
        try
        {
            value = reader(in reply);
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            // A payload that is not a TResult fails this request only; the connection goes on.
            TrySetException(new InvalidDataException($"The reply to request {reply.RequestId} could not be read as {typeof(T).Name}: {e.Message}", e));
            return;
        }

        TrySetResult(value);
    }

    public void Fail(Exception error)
    {
        if (error is OperationCanceledException canceled)
            TrySetCanceled(canceled.CancellationToken);
        else
            TrySetException(error);
    }
}

/// <summary>The readers of the two kinds of awaited reply, made once.</summary>
internal static class ReplyReaders
{
    public static readonly ReplyReader<MessageEnvelope> Envelope = static (in ProtoMessage reply) => reply.ToEnvelope();

    public static ReplyReader<T> Payload<T>() => PayloadReader<T>.Instance;

    private static class PayloadReader<T>
    {
        public static readonly ReplyReader<T> Instance = static (in ProtoMessage reply) => reply.Unpack<T>();
    }
}
