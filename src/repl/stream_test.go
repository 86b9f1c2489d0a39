package repl

import (
	"bytes"
	"math/rand"
	"testing"
)

// parseAll feeds b to Parse in pieces of random sizes, as a socket would, and returns the
// commands in order (a keepalive newline as an empty command).
func parseAll(t *testing.T, b []byte, rng *rand.Rand) [][]string {
	t.Helper()
	var out [][]string
	var buf []byte
	for len(b) > 0 || len(buf) > 0 {
		n := min(len(b), 1+rng.Intn(7))
		buf, b = append(buf, b[:n]...), b[n:]
		for {
			args, used, err := Parse(buf, nil)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if used == 0 {
				break
			}
			var cmd []string
			for _, a := range args {
				cmd = append(cmd, string(a))
			}
			out = append(out, cmd)
			buf = buf[used:]
		}
		if n == 0 && len(buf) > 0 {
			t.Fatalf("%d bytes left over", len(buf))
		}
	}
	return out
}

func TestParseFragmented(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var want [][]string
	var stream []byte
	enc := NewEncoder()
	for i := range 200 {
		switch i % 5 {
		case 0:
			stream = append(stream, '\n')
			want = append(want, nil)
		default:
			args := []string{"SET", "k" + string(rune('a'+i%26)), string(bytes.Repeat([]byte{byte(i)}, i))}
			db := i % 3
			if db != enc.db {
				want = append(want, []string{"SELECT", string(rune('0' + db))})
			}
			stream = enc.Append(stream, db, AppendCommand(nil, args...))
			want = append(want, args)
		}
	}
	got := parseAll(t, stream, rng)
	if len(got) != len(want) {
		t.Fatalf("%d commands, want %d", len(got), len(want))
	}
	for i := range want {
		if len(got[i]) != len(want[i]) {
			t.Fatalf("command %d: %q, want %q", i, got[i], want[i])
		}
		for j := range want[i] {
			if got[i][j] != want[i][j] {
				t.Fatalf("command %d: %q, want %q", i, got[i], want[i])
			}
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for _, b := range []string{"*1\r\n+PING\r\n", "*x\r\n", "*1\r\n$-1\r\n", "*1\r\n$3\r\nabcd\r\n",
		"*1\r\n$999999999999999999999\r\n", "*2000000\r\n", "*1\r\n$1\r\nab"} {
		_, n, err := Parse([]byte(b), nil)
		if b == "*1\r\n$1\r\nab" {
			if err != nil || n != 0 {
				t.Errorf("%q: partial command gave n %d err %v", b, n, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%q: accepted (n %d)", b, n)
		}
	}
}
