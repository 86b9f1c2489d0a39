package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
)

// maxLine bounds one reply line (a simple string, an error, a length header). Redis's longest lines are
// error messages well under this; a longer one means the stream is not RESP.
const maxLine = 1 << 20

var (
	errMalformed = errors.New("malformed reply")
	errLongLine  = errors.New("reply line longer than 1MB")
)

// replyReader walks a stream of RESP2/RESP3 replies without copying or allocating: it checks that
// each reply is well formed and says what its template expects (expect.go), skips over bulk bodies
// (comparing them with __data__ where asked), and reports error replies. It reads from src into
// a buffer it owns, as much as the kernel has each time, so one read usually brings many replies of a
// pipeline.
//
// at is the time of the read that brought the last byte of the reply that next just returned: every
// reply completed by one read arrived at the same moment, so one clock read per syscall is enough.
type replyReader struct {
	src  io.Reader
	buf  []byte
	r, w int
	at   time.Time
}

func newReplyReader(src io.Reader, size int) *replyReader {
	return &replyReader{src: src, buf: make([]byte, size)}
}

// badReply is a reply that fails the run: an error reply (errText, the first one met at any depth,
// takes precedence), or one that is not what its template expects (got says what it was). It is
// built only on failure, so it may allocate.
type badReply struct {
	errText []byte
	got     string
	miss    bool // got is a miss (a null, 0, an empty array) that --allow-misses would accept
}

// next consumes one complete reply and checks it against e (nil accepts anything but an error). It
// returns nil when the reply is as expected, and what was wrong otherwise; the whole reply is
// consumed either way, so the stream stays in step. An aggregate's elements are checked one level
// deep (against e.elem); deeper ones only parsed, an error reply among them reported.
func (rd *replyReader) next(e *expectation) (*badReply, error) {
	var bad *badReply
	line, err := rd.head(&bad)
	if err != nil {
		return nil, err
	}
	n, err := rd.element(line, e, &bad, -1, 0)
	if err != nil || n == 0 {
		return bad, err
	}
	if e == nil || e.kind != expectArray {
		return bad, rd.skip(n, &bad)
	}
	for i := range n {
		if line, err = rd.head(&bad); err != nil {
			return nil, err
		}
		k, err := rd.element(line, e.elem, &bad, i, n)
		if err == nil {
			err = rd.skip(k, &bad)
		}
		if err != nil {
			return nil, err
		}
	}
	return bad, nil
}

// head returns the first line of the next value, skipping the RESP3 attributes before it.
func (rd *replyReader) head(bad **badReply) ([]byte, error) {
	for {
		line, err := rd.line()
		if err != nil || line[0] != '|' {
			return line, err
		}
		n, ok := parseLen(line[1:])
		if !ok || n < 0 {
			return nil, errMalformed
		}
		if err := rd.skip(2*n, bad); err != nil {
			return nil, err
		}
	}
}

// skip consumes pending elements, nested ones included, checking only that none is an error.
func (rd *replyReader) skip(pending int, bad **badReply) error {
	for ; pending > 0; pending-- {
		line, err := rd.line()
		if err != nil {
			return err
		}
		add, err := rd.element(line, nil, bad, -1, 0)
		if err != nil {
			return err
		}
		pending += add
	}
	return nil
}

// element finishes the element whose first line (CRLF excluded) is line: it checks it against e
// (nil: no check), consumes a bulk body, and returns how many elements an aggregate adds. A
// mismatch or an error reply is noted in *bad; at is the element's index in a checked array of
// of elements, -1 for the reply itself.
func (rd *replyReader) element(line []byte, e *expectation, bad **badReply, at, of int) (add int, err error) {
	switch line[0] {
	case '-':
		noteError(bad, line[1:])
		return 0, nil
	case '!':
		n, ok := parseLen(line[1:])
		if !ok || n < 0 {
			return 0, errMalformed
		}
		body, err := rd.blobError(n)
		if err == nil {
			noteError(bad, body)
		}
		return 0, err
	case '$', '=':
		n, ok := parseLen(line[1:])
		if ok && n == -1 && line[0] == '$' {
			e.checkLine(line, 0, bad, at, of)
			return 0, nil
		}
		if !ok || n < 0 {
			return 0, errMalformed
		}
		return 0, rd.bulk(line, n, e, bad, at, of)
	case '*', '~', '%', '>', '|':
		n, ok := parseLen(line[1:])
		if ok && n == -1 && line[0] == '*' {
			e.checkLine(line, 0, bad, at, of)
			return 0, nil
		}
		if !ok || n < 0 {
			return 0, errMalformed
		}
		switch line[0] {
		case '%':
			n *= 2
		case '|':
			n = 2*n + 1 // the attribute's pairs, then the reply it describes
		}
		e.checkLine(line, n, bad, at, of)
		return n, nil
	case '+', ':', '_', ',', '#', '(':
		e.checkLine(line, 0, bad, at, of)
		return 0, nil
	}
	return 0, errMalformed
}

// bulk consumes a bulk body of n bytes, checking it against e.
func (rd *replyReader) bulk(line []byte, n int, e *expectation, bad **badReply, at, of int) error {
	kind := line[0] // line is the buffer's: the reads below may overwrite it
	if e == nil {
		_, err := rd.skipBody(n, nil)
		return err
	}
	switch e.kind {
	case expectAny, expectValue:
		_, err := rd.skipBody(n, nil)
		return err
	case expectBulk:
		if e.size < 0 || n == e.size {
			_, err := rd.skipBody(n, nil)
			return err
		}
	case expectData:
		if n == len(e.text) {
			diff, err := rd.skipBody(n, e.text)
			if err == nil && diff >= 0 {
				noteMismatch(bad, fmt.Sprintf("%c%d whose bytes differ from __data__ from byte %d on", kind, n, diff), false, at, of)
			}
			return err
		}
	case expectDouble:
		if kind == '$' && n <= 64 {
			b, err := rd.peek(n)
			if err != nil {
				return err
			}
			if isNumber(b) {
				_, err := rd.skipBody(n, nil)
				return err
			}
		}
	}
	head, err := rd.peek(min(n, 32))
	if err != nil {
		return err
	}
	got := fmt.Sprintf("%c%d %q", kind, n, head)
	if n > len(head) {
		got += "..."
	}
	noteMismatch(bad, got, false, at, of)
	_, err = rd.skipBody(n, nil)
	return err
}

// checkLine checks an element that its first line decides: a null, a simple string, an integer, a
// double, an aggregate's header with its element count n. A bulk string with a body is bulk's.
func (e *expectation) checkLine(line []byte, n int, bad **badReply, at, of int) {
	if e == nil || e.kind == expectAny {
		return
	}
	null := isNull(line)
	var ok, miss bool
	switch {
	case null:
		ok, miss = e.kind == expectNil, true
	case e.kind == expectValue:
		ok = true
	case e.kind == expectSimple:
		ok = line[0] == '+' && string(line[1:]) == string(e.text)
	case e.kind == expectDouble:
		ok = line[0] == ','
	case e.kind == expectInt:
		v, isInt := parseInt(line)
		ok, miss = isInt && v >= e.lo && v <= e.hi, isInt && v == 0
	case e.kind == expectArray:
		isArray := line[0] == '*' || line[0] == '~' || line[0] == '%'
		ok, miss = isArray && int64(n) >= e.lo && int64(n) <= e.hi, isArray && n == 0
	}
	if ok || miss && e.misses {
		return
	}
	noteMismatch(bad, render(line), miss, at, of)
}

func isNull(line []byte) bool {
	return line[0] == '_' || len(line) == 3 && (line[0] == '$' || line[0] == '*') && line[1] == '-' && line[2] == '1'
}

// render shows a reply's first line as a message quotes it.
func render(line []byte) string {
	s := strconv.Quote(string(line[:min(len(line), 80)]))
	s = s[1 : len(s)-1]
	if len(line) > 80 {
		s += "..."
	}
	switch {
	case isNull(line) && line[0] == '_':
		return s + " (null)"
	case isNull(line):
		return s + " (nil)"
	case len(line) == 2 && line[1] == '0' && (line[0] == '*' || line[0] == '~' || line[0] == '%'):
		return s + " (empty)"
	}
	return s
}

// noteError keeps the first error reply's text.
func noteError(bad **badReply, text []byte) {
	if *bad == nil {
		*bad = &badReply{}
	}
	if (*bad).errText == nil {
		(*bad).errText = append([]byte{}, text...)
	}
}

// noteMismatch keeps the first element that is not as expected.
func noteMismatch(bad **badReply, got string, miss bool, at, of int) {
	if *bad == nil {
		*bad = &badReply{}
	}
	if (*bad).got != "" || (*bad).errText != nil {
		return
	}
	if at >= 0 {
		got = fmt.Sprintf("element %d of %d is %s", at+1, of, got)
	}
	(*bad).got, (*bad).miss = got, miss
}

// line returns the next line without its CRLF, as a slice of the buffer valid until the next read.
func (rd *replyReader) line() ([]byte, error) {
	for {
		if i := bytes.IndexByte(rd.buf[rd.r:rd.w], '\n'); i >= 0 {
			line := rd.buf[rd.r : rd.r+i+1]
			rd.r += i + 1
			if len(line) < 3 || line[len(line)-2] != '\r' {
				return nil, errMalformed
			}
			return line[:len(line)-2], nil
		}
		if rd.w-rd.r >= maxLine {
			return nil, errLongLine
		}
		if err := rd.fill(); err != nil {
			return nil, err
		}
	}
}

// skipBody consumes a bulk body of n bytes and its CRLF, reading as needed; the body never has to fit
// in the buffer. With want (of n bytes) it compares the body with it and returns the offset of the
// first byte that differs, -1 if none.
func (rd *replyReader) skipBody(n int, want []byte) (diff int, err error) {
	diff = -1
	for off := 0; off < n; {
		if rd.r == rd.w {
			if err := rd.fill(); err != nil {
				return diff, err
			}
		}
		step := min(n-off, rd.w-rd.r)
		if want != nil && diff < 0 {
			diff = firstDiff(rd.buf[rd.r:rd.r+step], want[off:off+step], off)
		}
		rd.r += step
		off += step
	}
	crlf, err := rd.peek(2)
	if err != nil {
		return diff, err
	}
	if crlf[0] != '\r' || crlf[1] != '\n' {
		return diff, errMalformed
	}
	rd.r += 2
	return diff, nil
}

// firstDiff is base plus the index of the first byte where a and b differ, -1 if they are equal.
func firstDiff(a, b []byte, base int) int {
	if bytes.Equal(a, b) {
		return -1
	}
	for i := range a {
		if a[i] != b[i] {
			return base + i
		}
	}
	return -1
}

// blobError returns a RESP3 blob error's body (and consumes its CRLF).
func (rd *replyReader) blobError(n int) ([]byte, error) {
	if n > maxLine {
		return nil, errLongLine
	}
	b, err := rd.peek(n + 2)
	if err != nil {
		return nil, err
	}
	if b[n] != '\r' || b[n+1] != '\n' {
		return nil, errMalformed
	}
	rd.r += n + 2
	return b[:n], nil
}

// peek returns the next n unread bytes without consuming them, reading until they are buffered.
func (rd *replyReader) peek(n int) ([]byte, error) {
	for rd.w-rd.r < n {
		if err := rd.fill(); err != nil {
			return nil, err
		}
	}
	return rd.buf[rd.r : rd.r+n], nil
}

// fill reads more bytes, first moving the unread tail to the front (and growing the buffer only when
// the tail fills it, which takes a line or blob error longer than the buffer).
func (rd *replyReader) fill() error {
	if rd.r > 0 {
		rd.w = copy(rd.buf, rd.buf[rd.r:rd.w])
		rd.r = 0
	}
	if rd.w == len(rd.buf) {
		rd.buf = append(rd.buf, make([]byte, len(rd.buf))...)
	}
	n, err := rd.src.Read(rd.buf[rd.w:])
	if n > 0 {
		rd.w += n
		rd.at = time.Now()
		return nil
	}
	if err == io.EOF {
		return io.ErrUnexpectedEOF // the server closed the connection with replies still owed
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return err
}

// parseLen reads a RESP length: -1 or a non-negative decimal of at most 15 digits (no real reply comes
// near 10^15 bytes or elements, and sums of such lengths cannot overflow).
func parseLen(b []byte) (int, bool) {
	if len(b) == 2 && b[0] == '-' && b[1] == '1' {
		return -1, true
	}
	if len(b) == 0 || len(b) > 15 {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// parseInt reads an integer reply's line (":-12"); false if it is not one.
func parseInt(line []byte) (int64, bool) {
	if len(line) < 2 || line[0] != ':' {
		return 0, false
	}
	b, neg := line[1:], false
	if b[0] == '-' || b[0] == '+' {
		b, neg = b[1:], b[0] == '-'
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, false // 18 digits cannot overflow; no count or length comes near 10^18
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// isNumber tells whether b spells a number as Redis writes a score: an optional sign, digits with
// an optional fraction and exponent, or inf and nan.
func isNumber(b []byte) bool {
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		b = b[1:]
	}
	switch string(b) {
	case "inf", "nan":
		return true
	}
	digits := func() int {
		i := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		b = b[i:]
		return i
	}
	n := digits()
	if len(b) > 0 && b[0] == '.' {
		b = b[1:]
		n += digits()
	}
	if n == 0 {
		return false
	}
	if len(b) > 0 && (b[0] == 'e' || b[0] == 'E') {
		b = b[1:]
		if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
			b = b[1:]
		}
		if digits() == 0 {
			return false
		}
	}
	return len(b) == 0
}
