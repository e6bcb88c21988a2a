using System;
using System.Collections.Generic;
using System.Text;
using System.Threading.Tasks;
using NetServer.Tests.Infrastructure;
using Xunit;

namespace NetServer.Tests.Compatibility;

public class BufferTests
{
    [Fact]
    public void A_new_buffer_is_empty()
    {
        var buffer = new Buffer();
        Assert.True(buffer.IsEmpty);
        Assert.Equal(0, buffer.Size);
        Assert.Equal(0, buffer.Capacity);
        Assert.Equal(0, buffer.Offset);
        Assert.Empty(buffer.Data);

        var sized = new Buffer(100);
        Assert.True(sized.IsEmpty);
        Assert.Equal(100, sized.Capacity);
        Assert.Throws<ArgumentOutOfRangeException>(() => new Buffer(-1));
        Assert.Throws<ArgumentOutOfRangeException>(() => new Buffer((long)int.MaxValue + 1));
    }

    [Fact]
    public void A_buffer_over_an_array_holds_all_of_it_without_a_copy()
    {
        var data = Encoding.ASCII.GetBytes("hello");
        var buffer = new Buffer(data);
        Assert.Same(data, buffer.Data);
        Assert.Equal(5, buffer.Size);
        Assert.False(buffer.IsEmpty);
        Assert.Equal("hello", buffer.ToString());
        Assert.Throws<ArgumentNullException>(() => new Buffer((byte[])null!));
    }

    [Fact]
    public void Every_append_overload_adds_its_bytes_and_returns_their_count()
    {
        var buffer = new Buffer();
        Assert.Equal(1, buffer.Append((byte)'a'));
        Assert.Equal(2, buffer.Append(new[] { (byte)'b', (byte)'c' }));
        Assert.Equal(2, buffer.Append(Encoding.ASCII.GetBytes("xdey"), 1, 2));
        Assert.Equal(1, buffer.Append("f"u8));
        Assert.Equal(1, buffer.Append(new Buffer(new[] { (byte)'g' })));
        Assert.Equal(3, buffer.Append("€")); // three bytes of UTF-8
        Assert.Equal(2, buffer.Append("é".AsSpan()));
        Assert.Equal(0, buffer.Append(string.Empty));

        Assert.Equal("abcdef" + "g" + "€" + "é", buffer.ToString());
        Assert.Equal(12, buffer.Size);
    }

    [Fact]
    public void Append_checks_its_arguments()
    {
        var buffer = new Buffer();
        Assert.Throws<ArgumentNullException>(() => buffer.Append((byte[])null!));
        Assert.Throws<ArgumentNullException>(() => buffer.Append((string)null!));
        Assert.Throws<ArgumentNullException>(() => buffer.Append((Buffer)null!));
        Assert.Throws<ArgumentOutOfRangeException>(() => buffer.Append(new byte[4], 3, 2));
        Assert.Throws<ArgumentOutOfRangeException>(() => buffer.Append(new byte[4], -1, 2));
        Assert.Throws<ArgumentOutOfRangeException>(() => buffer.Append(new byte[4], 0, long.MaxValue));
        Assert.Equal(0, buffer.Size);
    }

    [Fact]
    public void Growth_takes_what_is_needed_or_doubles_whichever_is_more()
    {
        var buffer = new Buffer();
        var capacities = new List<long>();
        for (var i = 0; i < 9; i++)
        {
            buffer.Append((byte)i);
            capacities.Add(buffer.Capacity);
        }

        Assert.Equal(new long[] { 1, 2, 4, 4, 8, 8, 8, 8, 16 }, capacities);

        buffer.Append(new byte[100]); // 109 needed: more than double
        Assert.Equal(109, buffer.Capacity);
        buffer.Reserve(110); // double
        Assert.Equal(218, buffer.Capacity);
        buffer.Reserve(50); // smaller: nothing changes
        Assert.Equal(218, buffer.Capacity);
        for (var i = 0; i < 9; i++)
            Assert.Equal(i, buffer[i]);
    }

    [Fact]
    public void Sizes_beyond_the_largest_array_throw_instead_of_wrapping()
    {
        var buffer = new Buffer();
        Assert.Throws<ArgumentOutOfRangeException>(() => buffer.Reserve(-1));
        Assert.Throws<ArgumentOutOfRangeException>(() => buffer.Reserve(4L * 1024 * 1024 * 1024));
        Assert.Throws<ArgumentOutOfRangeException>(() => buffer.Resize(-5));
        Assert.Throws<ArgumentOutOfRangeException>(() => buffer.Resize(long.MaxValue));
        Assert.Equal(0, buffer.Capacity);
    }

    [Fact]
    public void ExtractString_decodes_a_checked_range()
    {
        var buffer = new Buffer();
        buffer.Append("key=välue");
        Assert.Equal("välue", buffer.ExtractString(4, 6));
        Assert.Equal(string.Empty, buffer.ExtractString(10, 0));
        Assert.Throws<ArgumentOutOfRangeException>(() => buffer.ExtractString(4, 7));
        Assert.Throws<ArgumentOutOfRangeException>(() => buffer.ExtractString(-1, 2));
        Assert.Throws<ArgumentOutOfRangeException>(() => buffer.ExtractString(11, 0));
    }

    [Fact]
    public void The_indexer_reads_only_the_bytes_held()
    {
        var buffer = new Buffer(64);
        buffer.Append("ab");
        Assert.Equal((byte)'b', buffer[1]);
        Assert.Throws<ArgumentOutOfRangeException>(() => buffer[2]);
        Assert.Throws<ArgumentOutOfRangeException>(() => buffer[-1]);
    }

    [Fact]
    public void Remove_closes_the_gap_and_the_offset_follows_its_byte()
    {
        var buffer = new Buffer();
        buffer.Append("0123456789");
        buffer.Shift(8); // at '8'
        buffer.Remove(2, 3);
        Assert.Equal("0156789", buffer.ToString());
        Assert.Equal(5, buffer.Offset); // still at '8'
        Assert.Equal("89", Encoding.ASCII.GetString(buffer.AsSpan()));

        buffer.Unshift(2); // at '6' (index 3)
        buffer.Remove(2, 3); // removes "567": the offset falls to the start of the gap
        Assert.Equal("0189", buffer.ToString());
        Assert.Equal(2, buffer.Offset);

        Assert.Throws<ArgumentOutOfRangeException>(() => buffer.Remove(3, 2));
        Assert.Equal("0189", buffer.ToString());
    }

    [Fact]
    public void Shift_and_Unshift_stay_within_the_bytes()
    {
        var buffer = new Buffer();
        buffer.Append("abc");
        buffer.Shift(3);
        Assert.Equal(0, buffer.AsSpan().Length);
        Assert.Throws<ArgumentOutOfRangeException>(() => buffer.Shift(1));
        buffer.Unshift(3);
        Assert.Throws<ArgumentOutOfRangeException>(() => buffer.Unshift(1));
        Assert.Equal(0, buffer.Offset);
    }

    [Fact]
    public void Resize_zeroes_the_bytes_it_exposes_and_clamps_the_offset()
    {
        var buffer = new Buffer();
        buffer.Append("secret!!");
        buffer.Shift(6);
        buffer.Resize(2);
        Assert.Equal(2, buffer.Offset);
        Assert.Equal("se", buffer.ToString());

        buffer.Resize(8); // the old bytes are still in the array: they must not reappear
        Assert.Equal(new byte[] { (byte)'s', (byte)'e', 0, 0, 0, 0, 0, 0 }, buffer.Data.AsSpan(0, 8).ToArray());
        buffer.Resize(40);
        Assert.Equal(40, buffer.Size);
        Assert.True(buffer.Capacity >= 40);
    }

    [Fact]
    public void Clear_empties_but_keeps_the_capacity()
    {
        var buffer = new Buffer();
        buffer.Append(new byte[300]);
        buffer.Shift(10);
        buffer.Clear();
        Assert.True(buffer.IsEmpty);
        Assert.Equal(0, buffer.Offset);
        Assert.Equal(300, buffer.Capacity);
    }

    [Fact]
    public void A_buffer_can_append_itself_while_growing()
    {
        var buffer = new Buffer();
        buffer.Append("abc");
        buffer.Append(buffer);
        Assert.Equal("abcabc", buffer.ToString());

        var pool = new LeakCheckingBufferPool();
        var pooled = new Buffer(pool);
        pooled.Append("xyz");
        pooled.Append(pooled.AsSpan());
        pooled.Append(pooled);
        Assert.Equal("xyzxyzxyzxyz", pooled.ToString());
    }

    [Fact]
    public async Task A_pooled_buffer_returns_every_array_it_replaces_or_releases()
    {
        var pool = new LeakCheckingBufferPool();
        var buffer = new Buffer(pool);
        for (var i = 0; i < 1000; i++)
            buffer.Append((byte)i);
        Assert.Equal(1, pool.Outstanding);
        Assert.Equal(1024, buffer.Capacity);
        for (var i = 0; i < 1000; i++)
            Assert.Equal((byte)i, buffer[i]);

        // Trim keeps a small array and lets a large one go, only when empty.
        buffer.Trim(512);
        Assert.Equal(1024, buffer.Capacity);
        buffer.Clear();
        buffer.Trim(2048);
        Assert.Equal(1024, buffer.Capacity);
        buffer.Trim(512);
        Assert.Equal(0, buffer.Capacity);
        Assert.Equal(0, pool.Outstanding);

        buffer.Append("again");
        Assert.Equal(1, pool.Outstanding);
        buffer.Release();
        Assert.True(buffer.IsEmpty);
        await pool.AssertAllReturnedAsync();
    }

    [Fact]
    public void Bounded_appends_double_only_up_to_the_bound()
    {
        var pool = new LeakCheckingBufferPool();
        var buffer = new Buffer(pool);
        buffer.AppendBounded(new byte[600], 1000);
        Assert.Equal(600, buffer.Capacity);
        buffer.AppendBounded(new byte[100], 1000); // doubling would be 1200
        Assert.Equal(1000, buffer.Capacity);
        buffer.AppendBounded(new byte[500], 1000); // the bytes need more than the bound: exactly that
        Assert.Equal(1200, buffer.Capacity);
        buffer.Release();
    }
}
