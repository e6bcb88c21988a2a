namespace NetServer.WebSockets;

/// <summary>
/// Validates the UTF-8 of a text message (RFC 3629, as RFC 6455 8.1 asks) as its bytes arrive: in
/// fragments and partial reads, split anywhere, even inside a code point.
/// </summary>
/// <remarks>
/// <para>
/// <see cref="Append"/> fails on the call that brings the first byte that cannot continue valid
/// UTF-8, without waiting for the rest of the message: a stray continuation byte, C0, C1 or F5 to FF
/// at once, a surrogate (ED A0..BF), an overlong form (E0 80..9F, F0 80..8F) or a code point over
/// U+10FFFF (F4 90..BF) at their second byte. The state between calls is the number of continuation
/// bytes still expected and the range the next one must fall in (RFC 3629 section 4).
/// </para>
/// <para>
/// The bulk of the bytes never meets that state machine: a per-target fast path vouches for a
/// prefix (the whole span up to a trailing partial code point through the runtime's vectorized
/// validator on net10.0, the leading ASCII run on netstandard), and inside the machine ASCII runs are
/// skipped a block at a time. A mutable struct: keep it in a field, not a readonly one.
/// </para>
/// </remarks>
internal partial struct WsUtf8Validator
{
    private byte _pending; // continuation bytes still expected for the current code point
    private byte _low;     // the range of the next continuation byte (narrower after E0, ED, F0, F4)
    private byte _high;
    private bool _failed;

    /// <summary>
    /// True when the bytes so far end on a code point boundary (and are valid): a text message
    /// may end only then.
    /// </summary>
    public readonly bool IsComplete => _pending == 0 && !_failed;

    /// <summary>True once <see cref="Append"/> returned false; cleared by <see cref="Reset"/>.</summary>
    public readonly bool HasFailed => _failed;

    /// <summary>
    /// Adds the next bytes of the message. False as soon as the bytes so far cannot be the start of
    /// valid UTF-8; the validator then stays failed until <see cref="Reset"/>.
    /// </summary>
    public bool Append(ReadOnlySpan<byte> data)
    {
        if (_failed)
            return false;
        if (_pending != 0)
        {
            // Finish the code point split by the last call, so the fast path starts on a boundary.
            var split = Math.Min(_pending, data.Length);
            if (!Scan(data.Slice(0, split)))
                return false;
            if (_pending != 0)
                return true;
            data = data.Slice(split);
        }

        return Scan(data.Slice(ValidPrefixLength(data)));
    }

    /// <summary>Forgets everything: ready for the next message.</summary>
    public void Reset() => this = default;

    // The length (0 to 3) of a code point at the end of data whose lead byte asks for more bytes than
    // follow it. Bytes after it that are not continuation bytes, or a bad lead byte, are left for
    // the state machine to reject.
    private static int TrailingPartialLength(ReadOnlySpan<byte> data)
    {
        for (var k = 1; k <= 3 && k <= data.Length; k++)
        {
            var b = data[data.Length - k];
            if (b < 0x80)
                return 0;
            if (b >= 0xC0)
            {
                var needed = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : 2;
                return needed > k ? k : 0;
            }
        }

        return 0;
    }

    // The state machine, from the current state over all of data.
    private bool Scan(ReadOnlySpan<byte> data)
    {
        int pending = _pending;
        int low = _low;
        int high = _high;
        var i = 0;
        while (i < data.Length)
        {
            var b = data[i];
            if (pending != 0)
            {
                if (b < low || b > high)
                    return Fail();
                pending--;
                low = 0x80;
                high = 0xBF;
                i++;
                continue;
            }

            if (b < 0x80)
            {
                var ascii = IndexOfNonAscii(data.Slice(i));
                if (ascii < 0)
                    break;
                i += ascii;
                b = data[i];
            }

            i++;
            low = 0x80;
            high = 0xBF;
            if (b < 0xC2)
            {
                return Fail(); // a continuation byte without a lead, or C0/C1 (overlong two-byte forms)
            }
            else if (b < 0xE0)
            {
                pending = 1;
            }
            else if (b < 0xF0)
            {
                pending = 2;
                if (b == 0xE0)
                    low = 0xA0;  // below is an overlong three-byte form
                else if (b == 0xED)
                    high = 0x9F; // above are the UTF-16 surrogates D800..DFFF
            }
            else if (b < 0xF5)
            {
                pending = 3;
                if (b == 0xF0)
                    low = 0x90;  // below is an overlong four-byte form
                else if (b == 0xF4)
                    high = 0x8F; // above is past U+10FFFF
            }
            else
            {
                return Fail(); // F5..FF: past U+10FFFF or not UTF-8 at all
            }
        }

        _pending = (byte)pending;
        _low = (byte)low;
        _high = (byte)high;
        return true;
    }

    private bool Fail()
    {
        _failed = true;
        return false;
    }
}
