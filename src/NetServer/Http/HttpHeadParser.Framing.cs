namespace NetServer.Http;

// The header-wide rules, applied once the head is whole: body framing (RFC 9112 6), Host
// (RFC 9112 3.2), Connection (RFC 9112 9.3), Expect (RFC 9110 10.1.1).
internal partial struct HttpHeadParser
{
    private static HttpParseError ApplyRequest(HttpHead head, ReadOnlySpan<byte> bytes, in FieldFacts facts, HttpLimits limits)
    {
        var http10 = head.MinorVersion == 0;
        if (facts.HostCount > 1)
            return HttpParseError.MultipleHosts;
        if (facts.HostCount == 0 && !http10 && !limits.RelaxHostCheck)
            return HttpParseError.MissingHost;
        if (facts.HostCount == 1 && !HttpSyntax.IsValidHost(facts.Host.Of(bytes)))
            return HttpParseError.InvalidHost;

        // An invalid Content-Length is refused even beside Transfer-Encoding: whichever a front
        // end believed, the message is not one both sides read the same way.
        if (facts.ContentLengthInvalid)
            return HttpParseError.InvalidContentLength;
        if (facts.ContentLengthConflict)
            return HttpParseError.ConflictingContentLength;

        // RFC 9110 8.6 lets a recipient take repeated equal values as one; Kestrel refuses them,
        // and so do we: a front end that decided otherwise is how request smuggling starts.
        if (facts.ContentLengthValues > 1)
            return HttpParseError.RepeatedContentLength;

        if (facts.HasTransferEncoding)
        {
            // RFC 9112 6.1: HTTP/1.0 has no transfer codings; such a message's framing is faulty.
            if (http10)
                return HttpParseError.TransferEncodingInHttp10;
            if (!facts.ChunkedLast)
                return HttpParseError.TransferEncodingNotChunked;
            if (facts.ChunkedCount > 1)
                return HttpParseError.ChunkedTwice;
            if (facts.OtherCoding)
                return HttpParseError.UnsupportedTransferCoding;
            head.Framing = HttpBodyFraming.Chunked;
            // RFC 9112 6.1: Transfer-Encoding wins over Content-Length, and the connection closes
            // after the answer, so bytes a front end framed by the length cannot become a request.
            if (facts.HasContentLength)
                head.CloseAfter = true;
        }
        else if (facts.HasContentLength)
        {
            if (facts.ContentLength > limits.MaxRequestBodySize)
                return HttpParseError.BodyTooLarge;
            head.Framing = HttpBodyFraming.ContentLength;
            head.ContentLength = facts.ContentLength;
        }

        if (facts.ExpectOther)
            return HttpParseError.UnsupportedExpectation;
        // RFC 9110 10.1.1: a 100-continue expectation in an HTTP/1.0 request is ignored.
        head.ExpectContinue = facts.ExpectContinue && !http10;
        if (facts.Close || (http10 && !facts.KeepAlive))
            head.CloseAfter = true;
        head.IsUpgrade = facts.UpgradeToken && facts.HasUpgrade;
        return default;
    }

    private static HttpParseError ApplyResponse(HttpHead head, in FieldFacts facts, bool requestWasHead)
    {
        var status = head.Status;
        head.CloseAfter = facts.Close || (head.MinorVersion == 0 && !facts.KeepAlive);
        head.IsUpgrade = status == 101;
        // RFC 9112 6.3, in its order.
        if (requestWasHead || status < 200 || status == 204 || status == 304)
            return default;
        if (facts.HasTransferEncoding)
        {
            if (facts.ChunkedLast)
            {
                head.Framing = HttpBodyFraming.Chunked;
                // Both fields, or transfer coding from an HTTP/1.0 server: read it, then close.
                if (facts.HasContentLength || facts.ContentLengthInvalid || head.MinorVersion == 0)
                    head.CloseAfter = true;
            }
            else
            {
                head.Framing = HttpBodyFraming.UntilClose;
                head.CloseAfter = true;
            }

            return default;
        }

        if (facts.ContentLengthInvalid || facts.ContentLengthConflict)
            return facts.ContentLengthInvalid ? HttpParseError.InvalidContentLength : HttpParseError.ConflictingContentLength;
        if (facts.HasContentLength)
        {
            head.Framing = HttpBodyFraming.ContentLength;
            head.ContentLength = facts.ContentLength;
            return default;
        }

        head.Framing = HttpBodyFraming.UntilClose;
        head.CloseAfter = true;
        return default;
    }

    /// <summary>What the fields of one head say about framing and the connection, in one pass.</summary>
    private struct FieldFacts
    {
        public int HostCount;
        public HttpRange Host;
        public bool HasContentLength;
        public long ContentLength;
        public bool ContentLengthInvalid;
        public bool ContentLengthConflict;
        public int ContentLengthValues; // values over all Content-Length fields ("5, 5" is two)
        public bool HasTransferEncoding;
        public bool ChunkedLast;
        public int ChunkedCount;
        public bool OtherCoding;
        public bool Close;
        public bool KeepAlive;
        public bool UpgradeToken;
        public bool HasUpgrade;
        public bool ExpectContinue;
        public bool ExpectOther;

        public static FieldFacts Collect(HttpHead head, ReadOnlySpan<byte> bytes)
        {
            var facts = default(FieldFacts);
            foreach (var field in head.Headers)
            {
                // Names are tokens, so the length picks the few candidates and EqualsLower is exact.
                var name = field.Name.Of(bytes);
                switch (name.Length)
                {
                    case 4 when HttpSyntax.EqualsLower(name, "host"u8):
                        if (facts.HostCount++ == 0)
                            facts.Host = field.Value;
                        break;
                    case 6 when HttpSyntax.EqualsLower(name, "expect"u8):
                        facts.AddExpect(field.Value.Of(bytes));
                        break;
                    case 7 when HttpSyntax.EqualsLower(name, "upgrade"u8):
                        facts.HasUpgrade |= !field.Value.IsEmpty;
                        break;
                    case 10 when HttpSyntax.EqualsLower(name, "connection"u8):
                        facts.AddConnection(field.Value.Of(bytes));
                        break;
                    case 14 when HttpSyntax.EqualsLower(name, "content-length"u8):
                        facts.AddContentLength(field.Value.Of(bytes));
                        break;
                    case 17 when HttpSyntax.EqualsLower(name, "transfer-encoding"u8):
                        facts.AddTransferEncoding(field.Value.Of(bytes));
                        break;
                }
            }

            return facts;
        }

        /// <summary>
        /// <c>1*DIGIT</c>, or a list of the same number ("42, 42", RFC 9110 8.6); every field of the
        /// head must give the same number.
        /// </summary>
        private void AddContentLength(ReadOnlySpan<byte> value)
        {
            var position = 0;
            var any = false;
            while (HttpSyntax.NextListElement(value, ref position, out var element))
            {
                any = true;
                if (!TryParseLength(element, out var length))
                {
                    ContentLengthInvalid = true;
                    return;
                }

                if (HasContentLength && length != ContentLength)
                    ContentLengthConflict = true;
                ContentLengthValues++;
                HasContentLength = true;
                ContentLength = length;
            }

            if (!any)
                ContentLengthInvalid = true;
        }

        private void AddTransferEncoding(ReadOnlySpan<byte> value)
        {
            HasTransferEncoding = true;
            var position = 0;
            while (HttpSyntax.NextListElement(value, ref position, out var coding))
            {
                if (coding.IsEmpty)
                    continue;
                // "chunked" takes no parameters: "chunked;x=1" is some other coding.
                ChunkedLast = HttpSyntax.EqualsLower(coding, "chunked"u8);
                if (ChunkedLast)
                    ChunkedCount++;
                else
                    OtherCoding = true;
            }
        }

        private void AddConnection(ReadOnlySpan<byte> value)
        {
            var position = 0;
            while (HttpSyntax.NextListElement(value, ref position, out var option))
            {
                Close |= HttpSyntax.EqualsLower(option, "close"u8);
                KeepAlive |= HttpSyntax.EqualsLower(option, "keep-alive"u8);
                UpgradeToken |= HttpSyntax.EqualsLower(option, "upgrade"u8);
            }
        }

        private void AddExpect(ReadOnlySpan<byte> value)
        {
            var position = 0;
            while (HttpSyntax.NextListElement(value, ref position, out var expectation))
            {
                if (expectation.IsEmpty)
                    continue;
                if (HttpSyntax.EqualsLower(expectation, "100-continue"u8))
                    ExpectContinue = true;
                else
                    ExpectOther = true;
            }
        }

        private static bool TryParseLength(ReadOnlySpan<byte> digits, out long length)
        {
            length = 0;
            if (digits.IsEmpty)
                return false;
            foreach (var b in digits)
            {
                if (!HttpSyntax.IsDigit(b))
                    return false;
                var digit = b - '0';
                if (length > (long.MaxValue - digit) / 10)
                    return false;
                length = (length * 10) + digit;
            }

            return true;
        }
    }
}
