package resp

import (
	"math"
	"testing"
)

func TestParseAllocatesNothing(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage counters change allocation counts")
	}
	lim := DefaultLimits()
	// Quoted inline commands (typed by hand) are unescaped in a copy: one allocation each.
	inputs := []struct {
		in     string
		allocs float64
	}{
		{pipelineStream, 1},
		{"*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n", 0},
		{"GET key\r\nSET k v\r\n", 0},
		{`SET "k\x41\n" 'it\'s' plain` + "\r\n", 1},
		{"*2\r\n$3\r\nGET\r\n$100\r\nab", 0}, // incomplete
	}
	args := make([][]byte, 0, 16)
	for _, c := range inputs {
		in := c.in
		buf := make([]byte, len(in))
		allocs := testing.AllocsPerRun(100, func() {
			copy(buf, in)
			rest := buf
			for len(rest) > 0 {
				var n int
				args, n, _, _ = Parse(args[:0], rest, &lim)
				if n == 0 {
					break
				}
				rest = rest[n:]
			}
		})
		if allocs != c.allocs {
			t.Errorf("Parse(%.30q...) allocates %v times per run, want %v", in, allocs, c.allocs)
		}
	}
}

func TestEncodersAllocateNothing(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage counters change allocation counts")
	}
	dst := make([]byte, 0, 4096)
	val := []byte("some value")
	allocs := testing.AllocsPerRun(100, func() {
		b := dst[:0]
		b = AppendSimple(b, "OK")
		b = AppendError(b, "ERR a\r\nb")
		b = AppendInt(b, math.MinInt64)
		b = AppendBulk(b, val)
		b = AppendBulkString(b, "str")
		b = AppendBulkInt(b, -1234567)
		for proto := 2; proto <= 3; proto++ {
			at := len(b)
			b = AppendNull(b, proto)
			b = AppendNullArray(b, proto)
			b = AppendArrayLen(b, 2)
			b = AppendMapLen(b, proto, 2)
			b = AppendSetLen(b, proto, 2)
			b = AppendPushLen(b, proto, 2)
			b = AppendDouble(b, proto, 0.1)
			b = AppendDouble(b, proto, -1.2345678901234567e-300)
			b = AppendDouble(b, proto, math.Inf(1))
			b = AppendBool(b, proto, true)
			b = AppendBigNumber(b, proto, "123456789012345678901234567890")
			b = AppendVerbatim(b, proto, "txt", val)
			b = InsertArrayLen(b, at, 12)
			b = InsertMapLen(b, at, proto, 6)
			b = InsertSetLen(b, at, proto, 12)
		}
		b = AppendAttrLen(b, 1)
		dst = b
	})
	if allocs != 0 {
		t.Fatalf("encoders allocate %v times per run", allocs)
	}
}
