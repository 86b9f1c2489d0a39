package testfuzz

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"testing"
)

// readReply appends the exact bytes of one RESP2 or RESP3 reply, nested aggregates included, to dst.
// It checks framing only (lengths and CRLFs), so the caller can compare two servers byte for byte.
// It is written apart from net/resp on purpose: a shared bug would hide from a shared reader.
func readReply(r *bufio.Reader, dst []byte) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if err != nil {
		return dst, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return dst, fmt.Errorf("malformed reply line %q", line)
	}
	dst = append(dst, line...)
	head, body := line[0], string(line[1:len(line)-2])
	switch head {
	case '+', '-', ':', '_', ',', '#', '(':
		return dst, nil
	case '$', '=', '!':
		return readBlob(r, dst, body)
	case '*', '~', '>':
		return readElems(r, dst, body, 1)
	case '%':
		return readElems(r, dst, body, 2)
	case '|':
		// An attribute map is followed by the reply it annotates.
		if dst, err = readElems(r, dst, body, 2); err != nil {
			return dst, err
		}
		return readReply(r, dst)
	}
	return dst, fmt.Errorf("unknown reply type %q", line)
}

func readBlob(r *bufio.Reader, dst []byte, count string) ([]byte, error) {
	n, err := strconv.Atoi(count)
	if err != nil || n < -1 {
		return dst, fmt.Errorf("bad blob length %q", count)
	}
	if n == -1 {
		return dst, nil
	}
	start := len(dst)
	dst = append(dst, make([]byte, n+2)...)
	if _, err := io.ReadFull(r, dst[start:]); err != nil {
		return dst, err
	}
	if dst[len(dst)-2] != '\r' || dst[len(dst)-1] != '\n' {
		return dst, fmt.Errorf("blob of %d bytes not followed by CRLF", n)
	}
	return dst, nil
}

func readElems(r *bufio.Reader, dst []byte, count string, per int) ([]byte, error) {
	n, err := strconv.Atoi(count)
	if err != nil || n < -1 {
		return dst, fmt.Errorf("bad aggregate length %q", count)
	}
	var rerr error
	for i := 0; i < n*per && rerr == nil; i++ {
		dst, rerr = readReply(r, dst)
	}
	return dst, rerr
}

func TestReadReplyFraming(t *testing.T) {
	f := func(in string, want ...string) {
		t.Helper()
		r := bufio.NewReader(stringsReader(in))
		for _, w := range want {
			got, err := readReply(r, nil)
			if err != nil || string(got) != w {
				t.Errorf("readReply(%q) = %q, %v; want %q", in, got, err, w)
				return
			}
		}
		if _, err := readReply(r, nil); err != io.EOF {
			t.Errorf("readReply(%q): trailing bytes or error %v after the expected replies", in, err)
		}
	}
	f("+OK\r\n:1\r\n", "+OK\r\n", ":1\r\n")
	f("$-1\r\n$0\r\n\r\n$4\r\na\r\nb\r\n", "$-1\r\n", "$0\r\n\r\n", "$4\r\na\r\nb\r\n")
	f("*2\r\n*1\r\n$1\r\nx\r\n:5\r\n*-1\r\n", "*2\r\n*1\r\n$1\r\nx\r\n:5\r\n", "*-1\r\n")
	f("%1\r\n+k\r\n~2\r\n_\r\n,1.5\r\n", "%1\r\n+k\r\n~2\r\n_\r\n,1.5\r\n")
	f("|1\r\n+a\r\n#t\r\n:7\r\n=7\r\ntxt:abc\r\n", "|1\r\n+a\r\n#t\r\n:7\r\n", "=7\r\ntxt:abc\r\n")
	for _, bad := range []string{"?x\r\n", "$3\r\nabcd\r\n", "+OK\n", "*x\r\n"} {
		if _, err := readReply(bufio.NewReader(stringsReader(bad)), nil); err == nil || err == io.EOF {
			t.Errorf("readReply(%q) accepted malformed input (err %v)", bad, err)
		}
	}
}

type stringReader struct{ s string }

func stringsReader(s string) io.Reader { return &stringReader{s} }

// Read hands out one byte at a time, so the framing test also covers replies split across reads.
func (r *stringReader) Read(p []byte) (int, error) {
	if r.s == "" {
		return 0, io.EOF
	}
	p[0] = r.s[0]
	r.s = r.s[1:]
	return 1, nil
}
