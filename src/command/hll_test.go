package command

import (
	"strconv"
	"strings"
	"testing"

	"github.com/hotkv/hotkv/ds/hll"
)

// FuzzHLLCommands stores arbitrary bytes with SET (most of them behind a valid-looking HYLL
// header) and runs every HyperLogLog command on them: none may panic (the engine would answer
// "ERR internal error"), and every reply is an integer, OK, a bulk, an array or one of Redis's
// HLL errors.
func FuzzHLLCommands(f *testing.F) {
	f.Add([]byte("\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\xff"), byte(0))
	f.Add([]byte("\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f"), byte(1))
	f.Add([]byte("\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\xff\x80"), byte(2))
	f.Add([]byte("\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"), byte(3))
	f.Add([]byte("\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x3f\x7f\xbf\xff"), byte(4))
	e := newTestEngine()
	f.Fuzz(func(t *testing.T, body []byte, mode byte) {
		tc := newTestConn(t, e)
		v := body
		switch mode % 4 {
		case 0, 1:
			v = append([]byte("HYLL"), body...)
		case 2: // a dense value of the right size with arbitrary registers
			v = make([]byte, hll.DenseSize)
			copy(v, "HYLL")
			copy(v[4:], body)
			v[4] = hll.Dense
		}
		tc.do("FLUSHALL")
		tc.do("SET", "x", string(v))
		tc.do("PFADD", "y", "a", "b", "c")
		cmds := [][]string{
			{"PFCOUNT", "x"}, {"PFCOUNT", "x"}, {"PFCOUNT", "x", "y"}, {"PFDEBUG", "DECODE", "x"},
			{"PFDEBUG", "ENCODING", "x"}, {"PFMERGE", "z", "x", "y"}, {"PFMERGE", "x", "y"},
			{"PFADD", "x", "e1", "e2", string(body)}, {"PFCOUNT", "z"}, {"PFDEBUG", "GETREG", "x"},
			{"PFDEBUG", "TODENSE", "x"}, {"PFADD", "x", strconv.Itoa(int(mode))}, {"PFCOUNT", "x", "z"},
			{"GET", "x"},
		}
		for _, c := range cmds {
			r := tc.do(c...)
			switch {
			case strings.Contains(r, "internal error"):
				t.Fatalf("%q on %q: %q", c, v, r)
			case r[0] == '-' && !strings.HasPrefix(r, "-INVALIDOBJ") && !strings.HasPrefix(r, "-WRONGTYPE") &&
				!strings.HasPrefix(r, "-ERR HLL encoding is not sparse"):
				t.Fatalf("%q on %q: unexpected error %q", c, v, r)
			}
		}
	})
}
