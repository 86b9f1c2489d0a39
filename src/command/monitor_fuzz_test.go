package command

import (
	"strconv"
	"testing"
	"time"

	"github.com/hotkv/hotkv/ds/strs"
)

var timeZero = time.Unix(1700000000, 123456000)

// appendRepr's quoting is Go's double-quoted syntax for the escapes it uses (\\ \" \n \r \t \a
// \b \xhh), so strconv.Unquote must give back every byte string unchanged, and the output is
// printable ASCII only.
func FuzzMonitorRepr(f *testing.F) {
	for _, s := range []string{"", "SET", "a b\"c\nd\x01\xc3\xa9\\", "\a\b\t\r\x7f\xff", "(redacted)"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		q := strs.AppendRepr(nil, b)
		for _, ch := range q {
			if ch < 0x20 || ch >= 0x7f {
				t.Fatalf("%q quoted as %q: byte %#x", b, q, ch)
			}
		}
		back, err := strconv.Unquote(string(q))
		if err != nil || back != string(b) {
			t.Fatalf("%q quoted as %q, unquoted %q (%v)", b, q, back, err)
		}
	})
}

// redactedArgs never panics and marks only positions inside the arguments, for any arguments
// of the commands it knows.
func FuzzRedactedArgs(f *testing.F) {
	f.Add("hello", []byte("2\x00AUTH\x00u\x00p\x00SETNAME\x00n"))
	f.Add("migrate", []byte("h\x00p\x00k\x000\x00100\x00AUTH2\x00u\x00p\x00KEYS\x00a"))
	f.Add("config|set", []byte("requirepass\x00x\x00masterauth"))
	f.Add("auth", []byte("a\x00b"))
	f.Fuzz(func(t *testing.T, name string, raw []byte) {
		spec := specNamed(name)
		if spec == nil {
			spec = table["auth"]
		}
		args := [][]byte{[]byte(spec.Name)}
		start := 0
		for i, ch := range raw {
			if ch == 0 {
				args = append(args, raw[start:i])
				start = i + 1
			}
		}
		args = append(args, raw[start:])
		s := redactedArgs(spec, args)
		for i := len(args); i < 64; i++ {
			if s.has(i) {
				t.Fatalf("%s %q: position %d marked", spec.Name, args, i)
			}
		}
		if s.has(0) {
			t.Fatalf("%s: the command name marked", spec.Name)
		}
		line := appendMonitorLine(nil, timeZero, 0, "x", spec, args)
		if len(line) < 2 || string(line[len(line)-2:]) != "\r\n" {
			t.Fatalf("line %q", line)
		}
	})
}
