package resp

import (
	"bufio"
	"errors"
	"io"
	"math"
	"slices"
)

// maxAggregate bounds the element count ReadReply accepts for one aggregate, so that counting pending
// elements cannot overflow; no real reply comes near it.
const maxAggregate = 1 << 40

// bodyChunk is how much of a bulk body ReadReply reads at a time: memory grows with the bytes that
// actually arrive, not with the length a (possibly broken) peer declares.
const bodyChunk = 64 * 1024

var (
	errBadReply  = errors.New("resp: malformed reply")
	errBadLength = errors.New("resp: malformed reply length")
)

// ReadReply reads one complete reply of any RESP2 or RESP3 type, nested aggregates included, and returns
// its exact bytes (a new slice). An attribute ("|") is returned together with the reply it describes; a
// push (">") is a reply of its own. At a clean end of stream the error is io.EOF; a stream that ends
// inside a reply gives io.ErrUnexpectedEOF. Streamed RESP3 types ("$?", "*?"), which Redis never sends,
// are malformed here.
func ReadReply(r *bufio.Reader) (raw []byte, err error) {
	pending := int64(1) // elements still to read; aggregates add theirs
	for pending > 0 {
		at := len(raw)
		if raw, err = readLine(r, raw); err != nil {
			if err == io.EOF && at > 0 {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		pending--
		line := raw[at : len(raw)-2]
		if raw, pending, err = readElement(r, raw, line, pending); err != nil {
			return nil, err
		}
	}
	return raw, nil
}

// readElement finishes the element whose first line is line (already appended to raw): it reads a bulk
// body, or adds an aggregate's elements to pending.
func readElement(r *bufio.Reader, raw, line []byte, pending int64) ([]byte, int64, error) {
	switch line[0] {
	case '+', '-', ':', '_', ',', '#', '(':
		return raw, pending, nil
	case '$', '=', '!':
		n, ok := atoi(line[1:])
		if ok && n == -1 && line[0] == '$' {
			return raw, pending, nil
		}
		if !ok || n < 0 || n > math.MaxInt64-2 {
			return nil, 0, errBadLength
		}
		raw, err := readBody(r, raw, n)
		return raw, pending, err
	case '*', '~', '%', '>', '|':
		n, ok := atoi(line[1:])
		if ok && n == -1 && line[0] == '*' {
			return raw, pending, nil
		}
		if !ok || n < 0 || n > maxAggregate {
			return nil, 0, errBadLength
		}
		switch line[0] {
		case '%':
			n *= 2
		case '|':
			n = 2*n + 1 // the pairs, then the reply the attribute belongs to
		}
		return raw, pending + n, nil
	}
	return nil, 0, errBadReply
}

// readLine appends one line, CRLF included, to raw. The line must be CRLF-terminated and not empty.
func readLine(r *bufio.Reader, raw []byte) ([]byte, error) {
	start := len(raw)
	for {
		chunk, err := r.ReadSlice('\n')
		raw = append(raw, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			if err == io.EOF && len(raw) > start {
				err = io.ErrUnexpectedEOF
			}
			return raw, err
		}
		break
	}
	if len(raw)-start < 3 || raw[len(raw)-2] != '\r' {
		return nil, errBadReply
	}
	return raw, nil
}

// readBody appends a bulk body of n bytes and its CRLF to raw.
func readBody(r *bufio.Reader, raw []byte, n int64) ([]byte, error) {
	for left := n + 2; left > 0; {
		step := int(min(left, bodyChunk))
		at := len(raw)
		raw = slices.Grow(raw, step)[:at+step]
		if _, err := io.ReadFull(r, raw[at:]); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		left -= int64(step)
	}
	if raw[len(raw)-2] != '\r' || raw[len(raw)-1] != '\n' {
		return nil, errBadReply
	}
	return raw, nil
}
