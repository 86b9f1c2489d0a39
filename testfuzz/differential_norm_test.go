package testfuzz

import (
	"bufio"
	"bytes"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hotkv/hotkv/net/resp/resptest"
)

// sameReply reports whether HotKV's reply hk and Redis's reply rd to c agree under c's
// comparison rule (see replyNorm).
func sameReply(c genCmd, hk, rd []byte) bool {
	if c.norm == normTTL {
		return sameTTL(hk, rd, ttlTolerance(c.args))
	}
	return bytes.Equal(normalize(hk, c.norm), normalize(rd, c.norm))
}

// ttlTolerance is how far apart two servers' answers to a TTL-like command may be: two seconds,
// in the unit the command answers in. The servers run the same command a few milliseconds apart,
// never seconds; a unit slip (milliseconds where Redis answers seconds) is a factor of 1000. A
// command that is not TTL-like gets no tolerance.
func ttlTolerance(args []string) int64 {
	name := strings.ToLower(args[0])
	if name == "object" && len(args) > 1 && strings.EqualFold(args[1], "idletime") {
		return 2 // seconds
	}
	switch name {
	case "ttl", "expiretime", "httl", "hexpiretime":
		return 2
	case "pttl", "pexpiretime", "hpttl", "hpexpiretime":
		return 2_000
	case "nttl":
		return 2_000_000_000
	}
	return 0
}

// sameTTL compares two integer replies, or two arrays of integers element by element (HTTL and
// friends): non-negative values may differ by up to tol, negative ones (the sentinels -1 "no
// expiry" and -2 "no such key or field") must be equal. Anything else must be byte-identical.
func sameTTL(hk, rd []byte, tol int64) bool {
	if bytes.Equal(hk, rd) {
		return true
	}
	a, errA := resptest.Parse(hk)
	b, errB := resptest.Parse(rd)
	if errA != nil || errB != nil || a.Kind != b.Kind || a.Null || b.Null {
		return false
	}
	if a.Kind == ':' {
		return closeInts(a, b, tol)
	}
	if a.Kind != '*' || len(a.Elems) != len(b.Elems) {
		return false
	}
	for i := range a.Elems {
		if !closeInts(a.Elems[i], b.Elems[i], tol) {
			return false
		}
	}
	return true
}

func closeInts(a, b resptest.Value, tol int64) bool {
	x, errX := a.Int()
	y, errY := b.Int()
	switch {
	case errX != nil || errY != nil:
		return false
	case x < 0 || y < 0:
		return x == y
	}
	return max(x, y)-min(x, y) <= tol
}

// normalize applies a comparison rule other than normTTL to a reply. A reply it cannot parse is
// returned unchanged, so the comparison still fails on it.
func normalize(reply []byte, norm replyNorm) []byte {
	switch norm {
	case normSorted:
		return sortElements(reply)
	case normShape:
		if v, err := resptest.Parse(reply); err == nil {
			return appendShape(nil, v)
		}
	}
	return reply
}

// sortElements sorts the top-level elements of an array or set reply by their bytes.
func sortElements(reply []byte) []byte {
	v, err := resptest.Parse(reply)
	if err != nil || (v.Kind != '*' && v.Kind != '~') || v.Null {
		return reply
	}
	head := bytes.IndexByte(reply, '\n') + 1
	elems, err := rawElements(reply[head:], len(v.Elems))
	if err != nil {
		return reply
	}
	slices.SortFunc(elems, bytes.Compare)
	return append(slices.Clip(reply[:head]), bytes.Join(elems, nil)...)
}

// rawElements splits the concatenated bytes of n replies.
func rawElements(b []byte, n int) ([][]byte, error) {
	r := bufio.NewReader(bytes.NewReader(b))
	elems := make([][]byte, n)
	for i := range elems {
		var err error
		if elems[i], err = resptest.ReadRaw(r); err != nil {
			return nil, err
		}
	}
	return elems, nil
}

// appendShape appends v with its string and double payloads replaced by "?", in RESP form:
// aggregate kinds and lengths, integers, nulls, booleans, simple strings and errors stay as they
// are. Attributes are dropped.
func appendShape(dst []byte, v resptest.Value) []byte {
	switch {
	case v.Null && v.Kind == '_':
		return append(dst, "_\r\n"...)
	case v.Null:
		return append(dst, v.Kind, '-', '1', '\r', '\n')
	case v.Kind == '$' || v.Kind == '=' || v.Kind == '!' || v.Kind == ',':
		return append(dst, v.Kind, '?', '\r', '\n')
	case v.IsAggregate():
		n := len(v.Elems)
		if v.Kind == '%' {
			n /= 2
		}
		dst = append(dst, v.Kind)
		dst = strconv.AppendInt(dst, int64(n), 10)
		dst = append(dst, '\r', '\n')
		for _, e := range v.Elems {
			dst = appendShape(dst, e)
		}
		return dst
	}
	dst = append(dst, v.Kind)
	dst = append(dst, v.Str...)
	return append(dst, '\r', '\n')
}

func TestNormalize(t *testing.T) {
	f := func(norm replyNorm, in, want string) {
		t.Helper()
		if got := string(normalize([]byte(in), norm)); got != want {
			t.Errorf("normalize(%q, %d) = %q, want %q", in, norm, got, want)
		}
	}
	f(normSorted, "*3\r\n$1\r\nb\r\n:1\r\n$1\r\na\r\n", "*3\r\n$1\r\na\r\n$1\r\nb\r\n:1\r\n")
	f(normSorted, "~2\r\n$2\r\n10\r\n$1\r\n9\r\n", "~2\r\n$1\r\n9\r\n$2\r\n10\r\n")
	f(normSorted, "*2\r\n*1\r\n$1\r\nz\r\n$1\r\na\r\n", "*2\r\n$1\r\na\r\n*1\r\n$1\r\nz\r\n")
	f(normSorted, "-WRONGTYPE x\r\n", "-WRONGTYPE x\r\n")
	f(normSorted, "*0\r\n", "*0\r\n")
	f(normSorted, "*-1\r\n", "*-1\r\n")
	f(normShape, "$3\r\nabc\r\n", "$?\r\n")
	f(normShape, "$-1\r\n", "$-1\r\n")
	f(normShape, "_\r\n", "_\r\n")
	f(normShape, "*2\r\n*2\r\n$1\r\na\r\n,1.5\r\n*2\r\n$2\r\nbc\r\n,inf\r\n", "*2\r\n*2\r\n$?\r\n,?\r\n*2\r\n$?\r\n,?\r\n")
	f(normShape, "%1\r\n$1\r\nk\r\n:3\r\n", "%1\r\n$?\r\n:3\r\n")
	f(normShape, "-ERR value is out of range\r\n", "-ERR value is out of range\r\n")
	f(normShape, "*1\r\n", "*1\r\n") // truncated: left as is
}

// The TTL rule: answers within two seconds (in the command's unit) agree, a unit slip and a
// changed sentinel do not.
func TestSameTTL(t *testing.T) {
	f := func(want bool, hk, rd string, args ...string) {
		t.Helper()
		c := genCmd{args: args, norm: normTTL}
		if got := sameReply(c, []byte(hk), []byte(rd)); got != want {
			t.Errorf("%q: HotKV %q vs Redis %q: same = %v, want %v", args, hk, rd, got, want)
		}
	}
	// A second of drift passes in every unit.
	f(true, ":999\r\n", ":1000\r\n", "ttl", "k")
	f(true, ":1000\r\n", ":999\r\n", "TTL", "k")
	f(true, ":1499000\r\n", ":1500000\r\n", "pttl", "k")
	f(true, ":1700000001\r\n", ":1700000000\r\n", "expiretime", "k")
	f(true, ":1700000001000\r\n", ":1700000000000\r\n", "pexpiretime", "k")
	f(true, ":4000000000\r\n", ":5000000000\r\n", "nttl", "k")
	f(true, ":11\r\n", ":10\r\n", "object", "idletime", "k")
	f(true, "*3\r\n:99\r\n:-1\r\n:-2\r\n", "*3\r\n:100\r\n:-1\r\n:-2\r\n", "httl", "h", "FIELDS", "3", "a", "b", "c")
	f(true, "*1\r\n:49000\r\n", "*1\r\n:50000\r\n", "hpttl", "h", "FIELDS", "1", "a")
	f(true, ":0\r\n", ":1\r\n", "ttl", "k")
	// Three seconds is too far.
	f(false, ":997\r\n", ":1000\r\n", "ttl", "k")
	f(false, ":1497000\r\n", ":1500000\r\n", "pttl", "k")
	// Unit slips: milliseconds for seconds and back, seconds for nanoseconds.
	f(false, ":1000000\r\n", ":1000\r\n", "ttl", "k")
	f(false, ":1500\r\n", ":1500000\r\n", "pttl", "k")
	f(false, ":1700000000000\r\n", ":1700000000\r\n", "expiretime", "k")
	f(false, ":5\r\n", ":5000000000\r\n", "nttl", "k")
	f(false, "*1\r\n:100000\r\n", "*1\r\n:100\r\n", "httl", "h", "FIELDS", "1", "a")
	f(false, "*1\r\n:100\r\n", "*1\r\n:100000\r\n", "hpexpiretime", "h", "FIELDS", "1", "a")
	f(false, ":100\r\n", ":100000\r\n", "object", "idletime", "k")
	// Sentinels match exactly, also against a small positive value.
	f(true, ":-2\r\n", ":-2\r\n", "ttl", "k")
	f(false, ":-1\r\n", ":-2\r\n", "ttl", "k")
	f(false, ":-1\r\n", ":1\r\n", "ttl", "k")
	f(false, ":0\r\n", ":-1\r\n", "pttl", "k")
	f(false, "*2\r\n:5\r\n:-1\r\n", "*2\r\n:5\r\n:-2\r\n", "httl", "h", "FIELDS", "2", "a", "b")
	// Shapes must agree: lengths, kinds, errors.
	f(false, "*1\r\n:5\r\n", "*2\r\n:5\r\n:5\r\n", "httl", "h", "FIELDS", "2", "a", "b")
	f(false, "$1\r\n5\r\n", ":5\r\n", "ttl", "k")
	f(true, "-ERR x\r\n", "-ERR x\r\n", "ttl", "k")
	f(false, "-ERR x\r\n", "-ERR y\r\n", "ttl", "k")
	// Another command gets no tolerance.
	f(false, ":999\r\n", ":1000\r\n", "incr", "k")
}
