package testfuzz

import (
	"bufio"
	"io"
	"testing"

	"github.com/hotkv/hotkv/net/resp/resptest"
)

// Replies are read with resptest, which is written apart from net/resp on purpose: a bug shared
// by the server's encoder and its reader would hide from a test that used the same reader.

// replyInt decodes an integer reply's raw bytes.
func replyInt[T ~string | ~[]byte](raw T) (int64, error) {
	v, err := resptest.Parse([]byte(raw))
	if err != nil {
		return 0, err
	}
	return v.Int()
}

// replyText decodes a bulk, simple or verbatim string reply's raw bytes.
func replyText[T ~string | ~[]byte](raw T) (string, error) {
	v, err := resptest.Parse([]byte(raw))
	if err != nil {
		return "", err
	}
	return v.Text()
}

// A connection hands over a reply in pieces of any size: ReadRaw returns each reply's exact
// bytes, nested aggregates and nulls included, when every Read yields a single byte
// (resptest's own tests read from whole strings).
func TestReadRawSplitReads(t *testing.T) {
	f := func(in string, want ...string) {
		t.Helper()
		r := bufio.NewReader(&byteReader{in})
		for _, w := range want {
			got, err := resptest.ReadRaw(r)
			if err != nil || string(got) != w {
				t.Errorf("ReadRaw(%q) = %q, %v; want %q", in, got, err, w)
				return
			}
		}
		if _, err := resptest.ReadRaw(r); err != io.EOF {
			t.Errorf("ReadRaw(%q): trailing bytes or error %v after the expected replies", in, err)
		}
	}
	f("+OK\r\n:1\r\n", "+OK\r\n", ":1\r\n")
	f("$-1\r\n$0\r\n\r\n$4\r\na\r\nb\r\n", "$-1\r\n", "$0\r\n\r\n", "$4\r\na\r\nb\r\n")
	f("*2\r\n*1\r\n$1\r\nx\r\n:5\r\n*-1\r\n", "*2\r\n*1\r\n$1\r\nx\r\n:5\r\n", "*-1\r\n")
	f("%1\r\n+k\r\n~2\r\n_\r\n,1.5\r\n", "%1\r\n+k\r\n~2\r\n_\r\n,1.5\r\n")
	f("|1\r\n+a\r\n#t\r\n:7\r\n=7\r\ntxt:abc\r\n", "|1\r\n+a\r\n#t\r\n:7\r\n", "=7\r\ntxt:abc\r\n")
}

// byteReader hands out one byte at a time.
type byteReader struct{ s string }

func (r *byteReader) Read(p []byte) (int, error) {
	if r.s == "" {
		return 0, io.EOF
	}
	p[0] = r.s[0]
	r.s = r.s[1:]
	return 1, nil
}
