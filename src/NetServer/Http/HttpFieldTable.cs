namespace NetServer.Http;

/// <summary>
/// Name/value pairs of one message as ranges into its bytes (header fields, trailer fields,
/// cookies), with each pair's strings made on first use. The array of entries and their strings
/// stay from one message to the next, so a connection's repeated headers cost nothing after the first.
/// </summary>
internal sealed class HttpFieldTable
{
    private Entry[] _entries = new Entry[8];
    private int _count;

    public int Count => _count;

    /// <summary>Forgets the pairs; their strings stay for reuse by the next message's pairs.</summary>
    public void Clear() => _count = 0;

    /// <summary>Forgets the pairs and their strings.</summary>
    public void Forget()
    {
        for (var i = 0; i < _entries.Length; i++)
        {
            _entries[i].NameText.Forget();
            _entries[i].ValueText.Forget();
        }

        _count = 0;
    }

    public void Add(HttpRange name, HttpRange value)
    {
        ref var entry = ref Next();
        entry.Name = name;
        entry.Value = value;
        entry.NameText.Invalidate();
        entry.ValueText.Invalidate();
    }

    /// <summary>Adds a pair whose strings the application gave (the builder side).</summary>
    public void Add(HttpRange name, HttpRange value, string nameText, string? valueText)
    {
        ref var entry = ref Next();
        entry.Name = name;
        entry.Value = value;
        entry.NameText.Set(nameText);
        if (valueText is null)
            entry.ValueText.Invalidate();
        else
            entry.ValueText.Set(valueText);
    }

    public HttpRange NameAt(int index) => _entries[index].Name;

    public HttpRange ValueAt(int index) => _entries[index].Value;

    /// <summary>Moves the value's range (a value extended in place); its string is made again on next use.</summary>
    public void SetValue(int index, HttpRange value)
    {
        _entries[index].Value = value;
        _entries[index].ValueText.Invalidate();
    }

    public string NameOf(int index, ReadOnlySpan<byte> source) => _entries[index].NameText.GetName(_entries[index].Name.Of(source));

    public string ValueOf(int index, ReadOnlySpan<byte> source) => _entries[index].ValueText.Get(_entries[index].Value.Of(source));

    /// <summary>The first pair at or after <paramref name="start"/> whose name is <paramref name="name"/> (ASCII, any case), or -1.</summary>
    public int IndexOf(ReadOnlySpan<byte> name, ReadOnlySpan<byte> source, int start = 0)
    {
        for (var i = start; i < _count; i++)
        {
            if (HttpAscii.EqualsIgnoreCase(name, _entries[i].Name.Of(source)))
                return i;
        }

        return -1;
    }

    /// <inheritdoc cref="IndexOf(ReadOnlySpan{byte}, ReadOnlySpan{byte}, int)"/>
    public int IndexOf(string name, ReadOnlySpan<byte> source, int start = 0)
    {
        for (var i = start; i < _count; i++)
        {
            if (HttpAscii.EqualsIgnoreCase(name, _entries[i].Name.Of(source)))
                return i;
        }

        return -1;
    }

    private ref Entry Next()
    {
        // Grows with the message: the parser bounds a received head's fields, the application its own.
        if (_count == _entries.Length)
            Array.Resize(ref _entries, _entries.Length * 2);
        return ref _entries[_count++];
    }

    private struct Entry
    {
        public HttpRange Name;
        public HttpRange Value;
        public HttpText NameText;
        public HttpText ValueText;
    }
}
