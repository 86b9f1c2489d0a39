package testfuzz

import (
	"testing"

	"github.com/hotkv/hotkv/src/repl"
)

// FuzzReplStream feeds arbitrary bytes, cut at an arbitrary point, to the replica's stream
// parser: no panic, every command it returns lies within the input, and what it consumes
// whole is consumed the same whether the bytes came at once or in two reads.
func FuzzReplStream(f *testing.F) {
	f.Add([]byte("*1\r\n$4\r\nPING\r\n\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n"), 5)
	f.Add([]byte("*2\r\n$6\r\nSELECT\r\n$1\r\n3\r\nPING\r\n"), 3)
	f.Add([]byte("*3\r\n$8\r\nREPLCONF\r\n$6\r\nGETACK\r\n$1\r\n*\r\n"), 20)
	f.Add([]byte("*-1\r\n$99999999999\r\n"), 1)
	f.Fuzz(func(t *testing.T, b []byte, cut int) {
		whole := drain(b)
		if cut < 0 {
			cut = -cut
		}
		cut = cut % (len(b) + 1)
		var in []byte
		var split [][]byte
		for _, part := range [][]byte{b[:cut], b[cut:]} {
			in = append(in, part...)
			for {
				args, n, err := repl.Parse(in, nil)
				if err != nil || n == 0 {
					break
				}
				if n > len(in) {
					t.Fatalf("consumed %d of %d bytes", n, len(in))
				}
				for _, a := range args {
					if len(a) > n {
						t.Fatalf("argument of %d bytes in a %d-byte command", len(a), n)
					}
				}
				split = append(split, append([]byte(nil), in[:n]...))
				in = in[n:]
			}
		}
		if len(split) < len(whole) {
			// A protocol error may stop the split run where the whole run went on only if the
			// whole run hit it too; otherwise both consume the same commands.
			t.Fatalf("split input gave %d commands, whole %d", len(split), len(whole))
		}
		for i := range whole {
			if string(whole[i]) != string(split[i]) {
				t.Fatalf("command %d differs: %q vs %q", i, whole[i], split[i])
			}
		}
	})
}

func drain(b []byte) [][]byte {
	var out [][]byte
	for {
		_, n, err := repl.Parse(b, nil)
		if err != nil || n == 0 {
			return out
		}
		out = append(out, append([]byte(nil), b[:n]...))
		b = b[n:]
	}
}
