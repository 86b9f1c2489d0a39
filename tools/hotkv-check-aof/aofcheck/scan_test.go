package aofcheck

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// stream is a generated AOF with the reference facts about it: the offsets
// where a reader may stop (after each command outside MULTI, after each
// EXEC, after each annotation) with the whole commands before them, and the
// spans of annotation lines (a cut inside one is still a valid end).
type stream struct {
	b      []byte
	ends   []int64
	counts []int64
	notes  [][2]int64
}

func genStream(r *rand.Rand) *stream {
	s := &stream{ends: []int64{0}, counts: []int64{0}}
	var n int64
	cmd := func(args ...string) {
		fmt.Fprintf(bytesWriter{&s.b}, "*%d\r\n", len(args))
		for _, a := range args {
			fmt.Fprintf(bytesWriter{&s.b}, "$%d\r\n%s\r\n", len(a), a)
		}
		n++
	}
	arg := func() string {
		k := r.IntN(20)
		if r.IntN(10) == 0 {
			k = 200 + r.IntN(400)
		}
		var sb strings.Builder
		for range k {
			sb.WriteByte("ab\r\n*$#1"[r.IntN(8)])
		}
		return sb.String()
	}
	mark := func() {
		s.ends = append(s.ends, int64(len(s.b)))
		s.counts = append(s.counts, n)
	}
	for range 1 + r.IntN(12) {
		switch r.IntN(6) {
		case 0:
			cmd("MULTI")
			for range r.IntN(4) {
				cmd("SET", arg(), arg())
			}
			cmd("exec")
		case 1:
			at := int64(len(s.b))
			s.b = fmt.Appendf(s.b, "#TS:%d\r\n", 1700000000+r.IntN(1000))
			s.notes = append(s.notes, [2]int64{at, int64(len(s.b))})
		default:
			args := []string{"SET"}
			for range r.IntN(4) {
				args = append(args, arg())
			}
			cmd(args...)
		}
		mark()
	}
	return s
}

type bytesWriter struct{ b *[]byte }

func (w bytesWriter) Write(p []byte) (int, error) { *w.b = append(*w.b, p...); return len(p), nil }

// want is the reference verdict for the stream cut at cut.
func (s *stream) want(cut int64) (okUpTo, commands int64, valid bool) {
	for i, e := range s.ends {
		if e <= cut {
			okUpTo, commands = e, s.counts[i]
		}
	}
	if okUpTo == cut {
		return okUpTo, commands, true
	}
	for _, n := range s.notes {
		if n[0] == okUpTo && cut > n[0] && cut < n[1] {
			return cut, commands, true // a partial last annotation line is read like a whole one
		}
	}
	return okUpTo, commands, false
}

// TestScanEveryCut: 200 generated streams cut at every byte end their valid
// part where the reference says, count the same commands, and call every
// cut inside a command a torn tail with nothing whole after it.
func TestScanEveryCut(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	cuts := 0
	for range 200 {
		s := genStream(r)
		for cut := int64(0); cut <= int64(len(s.b)); cut++ {
			res := Scan(bytes.NewReader(s.b[:cut]), 0, 0)
			okUpTo, commands, valid := s.want(cut)
			if res.OKUpTo != okUpTo || res.Commands != commands || (res.Problem == nil) != valid {
				t.Fatalf("cut %d of %q: got ok %d cmds %d problem %+v; want ok %d cmds %d valid %v",
					cut, s.b, res.OKUpTo, res.Commands, res.Problem, okUpTo, commands, valid)
			}
			if !valid && !res.Problem.AtEOF {
				t.Fatalf("cut %d of %q: %+v not at EOF", cut, s.b, res.Problem)
			}
			if !valid && cut%7 == 0 {
				if found, _ := Resync(bytes.NewReader(s.b[okUpTo+1:cut]), okUpTo+1); found >= 0 && found < cut {
					// A value may itself hold "\n*1\r\n$1\r\nx\r\n": only then may a command parse inside it.
					if !bytes.Contains(s.b[okUpTo:cut], []byte("\n*")) {
						t.Fatalf("cut %d: resync found a command at %d", cut, found)
					}
				}
			}
			cuts++
		}
	}
	t.Logf("%d cuts", cuts)
}

// TestScanFlipInMiddle: a broken CRLF in the middle is not at EOF, and
// Resync finds the commands after it.
func TestScanFlipInMiddle(t *testing.T) {
	var b []byte
	for i := range 20 {
		b = fmt.Appendf(b, "*3\r\n$3\r\nSET\r\n$2\r\nk%d\r\n$1\r\nv\r\n", i%10)
	}
	one := len(b) / 20
	b[5*one+11] = 'X' // the CR after "SET" of the sixth command
	res := Scan(bytes.NewReader(b), 0, 0)
	if res.Problem == nil || res.Problem.AtEOF || res.OKUpTo != int64(5*one) || res.Commands != 5 {
		t.Fatalf("%+v %+v", res, res.Problem)
	}
	found, n := Resync(bytes.NewReader(b[5*one+1:]), int64(5*one+1))
	if found != int64(6*one) || n != 14 {
		t.Fatalf("resync at %d with %d commands", found, n)
	}
}

// TestScanRules: what redis-check-aof 7.0.15 said about these inputs
// (recorded by running it on each): valid or not, and ok_up_to.
func TestScanRules(t *testing.T) {
	for _, c := range []struct {
		in     string
		okUpTo int64
		valid  bool
	}{
		{"#x\n*1\r\n$4\r\nPING\r\n", 17, true},
		{"*1\r\n$4\r\nPING\r\n*1\r\n$4\r\nEXEC\r\n", 14, false},
		{"*1\r\n$5\r\nMULTI\r\n*1\r\n$5\r\nMULTI\r\n", 0, false},
		{"*0\r\n", 4, true},
		{"*1\r\n$-1\r\n", 0, false},
		{"hello world\r\n", 0, false},
		{"*1\r\n$5\r\nMULTI\r\n", 0, false},
	} {
		res := Scan(strings.NewReader(c.in), 0, 0)
		if res.OKUpTo != c.okUpTo || (res.Problem == nil) != c.valid {
			t.Errorf("%q: ok %d problem %+v; redis-check-aof: ok_up_to %d valid %v", c.in, res.OKUpTo, res.Problem, c.okUpTo, c.valid)
		}
	}
}

// TestStrtol: C's strtol on the forms the AOF can hold.
func TestStrtol(t *testing.T) {
	for in, want := range map[string][2]int64{
		"12\r\n": {12, 2}, " -3x": {-3, 3}, "+7": {7, 2}, "x": {0, 0}, "-": {0, 0},
		"99999999999999999999": {1<<63 - 1, 20}, "-99999999999999999999": {-1 << 63, 21},
	} {
		if v, n := strtol([]byte(in)); v != want[0] || int64(n) != want[1] {
			t.Errorf("%q: %d %d, want %v", in, v, n, want)
		}
	}
}

// FuzzScan: no panic; offsets in order; a valid stream is valid to its end;
// the valid prefix alone is valid with the same commands.
func FuzzScan(f *testing.F) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 8 {
		f.Add(genStream(r).b)
	}
	f.Add([]byte("*1\r\n$5\r\nMULTI\r\n*1\r\n$4\r\nEXEC\r\n#TS:5\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		res := Scan(bytes.NewReader(b), 0, 0)
		if res.OKUpTo < 0 || res.OKUpTo > res.End || res.End > int64(len(b)) {
			t.Fatalf("ok %d end %d len %d", res.OKUpTo, res.End, len(b))
		}
		if res.Problem == nil && res.OKUpTo != int64(len(b)) {
			t.Fatalf("valid but ok %d of %d", res.OKUpTo, len(b))
		}
		pre := Scan(bytes.NewReader(b[:res.OKUpTo]), 0, 0)
		if pre.Problem != nil || pre.Commands != res.Commands || pre.OKUpTo != res.OKUpTo {
			t.Fatalf("prefix: %+v %+v, whole: %+v", pre, pre.Problem, res)
		}
		if found, _ := Resync(bytes.NewReader(b), 0); found > int64(len(b)) {
			t.Fatalf("resync at %d of %d", found, len(b))
		}
		Scan(bytes.NewReader(b), 0, 1700000500)
	})
}
