package main

import (
	"bytes"
	"errors"
	"io"
	"time"
)

// maxLine bounds one reply line (a simple string, an error, a length header). Redis's longest lines are
// error messages well under this; a longer one means the stream is not RESP.
const maxLine = 1 << 20

var (
	errMalformed = errors.New("malformed reply")
	errLongLine  = errors.New("reply line longer than 1MB")
)

// replyReader walks a stream of RESP2/RESP3 replies without copying or allocating: it only checks that
// each reply is well formed, skips over bulk bodies, and reports error replies. It reads from src into
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

// next consumes one complete reply. For an error reply ("-..." or RESP3 "!...") it returns a copy of the
// error's text (the run is failing, so the allocation does not matter); otherwise msg is nil. An error
// inside an aggregate (a MULTI/EXEC result) is reported too.
func (rd *replyReader) next() (msg []byte, err error) {
	for pending := 1; pending > 0; pending-- {
		line, err := rd.line()
		if err != nil {
			return nil, err
		}
		var add int
		if add, msg, err = rd.element(line, msg); err != nil {
			return nil, err
		}
		pending += add
	}
	return msg, nil
}

// element finishes the element whose first line (CRLF excluded) is line: it skips a bulk body and
// returns how many elements an aggregate adds. msg is the first error text met so far in this reply.
func (rd *replyReader) element(line, msg []byte) (add int, _ []byte, err error) {
	switch line[0] {
	case '-':
		if msg == nil {
			msg = append([]byte{}, line[1:]...)
		}
		return 0, msg, nil
	case '+', ':', '_', ',', '#', '(':
		return 0, msg, nil
	case '$', '=', '!':
		n, ok := parseLen(line[1:])
		if ok && n == -1 && line[0] == '$' {
			return 0, msg, nil
		}
		if !ok || n < 0 {
			return 0, nil, errMalformed
		}
		if line[0] == '!' {
			body, err := rd.blobError(n)
			if msg == nil && err == nil {
				msg = append([]byte{}, body...)
			}
			return 0, msg, err
		}
		return 0, msg, rd.skipBody(n)
	case '*', '~', '%', '>', '|':
		n, ok := parseLen(line[1:])
		if ok && n == -1 && line[0] == '*' {
			return 0, msg, nil
		}
		if !ok || n < 0 {
			return 0, nil, errMalformed
		}
		switch line[0] {
		case '%':
			n *= 2
		case '|':
			n = 2*n + 1 // the attribute's pairs, then the reply it describes
		}
		return n, msg, nil
	}
	return 0, nil, errMalformed
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
// in the buffer.
func (rd *replyReader) skipBody(n int) error {
	for n > 0 {
		if rd.r == rd.w {
			if err := rd.fill(); err != nil {
				return err
			}
		}
		step := min(n, rd.w-rd.r)
		rd.r += step
		n -= step
	}
	crlf, err := rd.peek(2)
	if err != nil {
		return err
	}
	if crlf[0] != '\r' || crlf[1] != '\n' {
		return errMalformed
	}
	rd.r += 2
	return nil
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
