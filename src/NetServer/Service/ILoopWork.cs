namespace NetServer;

/// <summary>Engine work a loop runs without a delegate (the object is its own work item).</summary>
internal interface ILoopWork
{
    void Execute();
}
