package resp

import (
	"bytes"
	"math"
)

// Parse reads one command from the front of buf.
//
//   - Complete command: args is dst with the command's arguments appended, each a sub-slice of buf (no
//     copy, capacity capped so appending to one cannot clobber the next); n > 0 is the number of bytes
//     consumed; err is nil. An empty command ("*0\r\n", "*-1\r\n", a blank inline line) gives no
//     arguments and n > 0: the caller skips it, as Redis does.
//   - Incomplete: n == 0, err == nil, and need is the smallest len(buf) that could let the next call make
//     progress: exact while a bulk body is awaited (so it may be as large as MaxBulkLen: grow the read
//     buffer as bytes arrive, not to need), len(buf)+1 when nothing better is known.
//   - Malformed: err is a *ProtocolError carrying Redis's exact text.
//
// args always has dst's length plus the arguments of a complete command only; its capacity may have grown
// by one entry per argument that arrived, so passing args[:0] back in reuses it. Parse allocates nothing
// when dst has room (except the error it returns, and a copy of each quoted inline command's line, which
// holds that command's unescaped arguments) and never panics.
//
// Parse is stateless and never writes to buf: a command that arrives in k pieces is scanned k times, and
// the same bytes parsed again give the same arguments. Call it again once len(buf) reaches need.
// A nil lim means DefaultLimits().
func Parse(dst [][]byte, buf []byte, lim *Limits) (args [][]byte, n int, need int, err error) {
	if len(buf) == 0 {
		return dst, 0, 1, nil
	}
	if lim == nil {
		lim = &defaultLimits
	}
	if buf[0] == '*' {
		return parseMultibulk(dst, buf, lim)
	}
	return parseInline(dst, buf)
}

// parseMultibulk reads "*<count>\r\n" then count "$<len>\r\n<bytes>\r\n" arguments, checking them in
// Redis's order (processMultibulkBuffer).
func parseMultibulk(dst [][]byte, buf []byte, lim *Limits) ([][]byte, int, int, error) {
	end, need, err := countLine(buf, 0, msgTooBigMbulk)
	if end < 0 {
		return dst, 0, need, err
	}
	count, ok := atoi(buf[1:end])
	switch {
	case !ok || count > math.MaxInt32:
		return dst, 0, 0, protoErr(msgInvalidMbulk)
	case count > unauthMaxArgs && lim.Unauthenticated:
		return dst, 0, 0, protoErr(msgUnauthMbulk)
	}
	pos := end + 2
	start := len(dst)
	// Each argument takes at least 6 bytes, so this loop is bounded by len(buf), not by count.
	for ; count > 0; count-- {
		var arg []byte
		arg, pos, need, err = parseBulk(buf, pos, lim)
		if pos < 0 {
			return dst[:start], 0, need, err
		}
		dst = append(dst, arg)
	}
	return dst, pos, 0, nil
}

// parseBulk reads one "$<len>\r\n<bytes>\r\n" argument at buf[pos]. It returns the argument and the
// position after it, or next < 0 with need (incomplete) or err (malformed).
func parseBulk(buf []byte, pos int, lim *Limits) (arg []byte, next int, need int, err error) {
	end, need, err := countLine(buf, pos, msgTooBigBulk)
	if end < 0 {
		return nil, -1, need, err
	}
	if buf[pos] != '$' {
		return nil, -1, 0, expectedDollar(buf[pos])
	}
	size, ok := atoi(buf[pos+1 : end])
	switch {
	case !ok || size < 0 || size > lim.MaxBulkLen:
		return nil, -1, 0, protoErr(msgInvalidBulk)
	case size > unauthMaxBulkLen && lim.Unauthenticated:
		return nil, -1, 0, protoErr(msgUnauthBulk)
	}
	body := end + 2
	// Redis waits for the two bytes after the body but never checks that they are CRLF.
	if int64(len(buf)-body)-2 < size {
		return nil, -1, bodyEnd(body, size), nil
	}
	stop := body + int(size)
	return buf[body:stop:stop], stop + 2, 0, nil
}

// countLine finds the '\r' ending the count line that starts at buf[pos]. Like Redis it requires one
// more byte after the '\r' (skipped unchecked, as Redis skips it). It returns the index of '\r', or -1
// with need or with the "too big" error tooBig.
func countLine(buf []byte, pos int, tooBig string) (end, need int, err error) {
	end, need, big := lineEnd(buf, pos, '\r')
	switch {
	case big:
		return -1, 0, protoErr(tooBig)
	case end < 0:
		return -1, need, nil
	case end+1 >= len(buf):
		return -1, end + 2, nil
	}
	return end, 0, nil
}

// lineEnd finds the byte c that ends the line starting at buf[from], searching as Redis does with
// strchr: its query buffer is a C string, so a NUL byte ends the search and a line holding one never
// completes. Redis gives up on a line once more than inlineMax bytes are buffered without its end; to
// give the same answer however the bytes were split into reads, only the first inlineMax+1 bytes are
// searched (what Redis sees when bytes trickle in). It returns the index of c; or -1 and need, the
// buffer length worth waiting for; or -1 and tooBig.
func lineEnd(buf []byte, from int, c byte) (end, need int, tooBig bool) {
	// Count lines are a few bytes long: a plain loop finds their end faster than two IndexByte calls.
	for i := from; i < len(buf) && i < from+32; i++ {
		if buf[i] == c {
			return i, 0, false
		}
		if buf[i] == 0 {
			break
		}
	}
	win := buf[from:]
	if len(win) > inlineMax+1 {
		win = win[:inlineMax+1]
	}
	i := bytes.IndexByte(win, c)
	if i >= 0 && bytes.IndexByte(win[:i], 0) < 0 {
		return from + i, 0, false
	}
	if len(buf)-from > inlineMax {
		return -1, 0, true
	}
	if i >= 0 || bytes.IndexByte(win, 0) >= 0 {
		// A NUL hides the end of line: only the "too big" error can come next.
		return -1, from + inlineMax + 1, false
	}
	return -1, len(buf) + 1, false
}

// atoi parses b as Redis's string2ll does: an optional '-', then "0" or digits without a leading zero;
// no '+', no spaces, at most 20 bytes, within int64.
func atoi(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	if len(b) == 1 && b[0] == '0' {
		return 0, true
	}
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || b[0] < '1' || b[0] > '9' {
		return 0, false
	}
	if len(b) <= 18 { // cannot overflow: the common case, kept free of overflow checks
		var v int64
		for _, c := range b {
			if c < '0' || c > '9' {
				return 0, false
			}
			v = v*10 + int64(c-'0')
		}
		if neg {
			return -v, true
		}
		return v, true
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' || v > math.MaxUint64/10 {
			return 0, false
		}
		d := uint64(c - '0')
		if v*10 > math.MaxUint64-d {
			return 0, false
		}
		v = v*10 + d
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return int64(-v), true
	}
	if v > math.MaxInt64 {
		return 0, false
	}
	return int64(v), true
}

// bodyEnd is the buffer length that holds a bulk of size bytes starting at body, plus its CRLF,
// saturating at the largest int instead of overflowing.
func bodyEnd(body int, size int64) int {
	if size > int64(math.MaxInt-2-body) {
		return math.MaxInt
	}
	return body + int(size) + 2
}
