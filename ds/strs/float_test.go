package strs

import (
	"bufio"
	"fmt"
	"math/big"
	"math/rand/v2"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/net/resp/resptest"
)

// Sums of dyadic rationals with few fraction bits and small magnitude are exact in a long double
// and have at most 17 decimals, so the expected text is the exact sum's decimal form.
func TestIncrByFloatDyadicExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		a := big.NewRat(rng.Int64N(1<<40)-1<<39, 1<<rng.IntN(17))
		b := big.NewRat(rng.Int64N(1<<40)-1<<39, 1<<rng.IntN(17))
		got, err := IncrByFloat(nil, []byte(a.FloatString(17)), []byte(b.FloatString(17)))
		if err != nil {
			t.Fatal(err)
		}
		want := trimDecimal(new(big.Rat).Add(a, b).FloatString(17))
		if string(got) != want {
			t.Fatalf("%s + %s = %s, want %s", a.FloatString(17), b.FloatString(17), got, want)
		}
	}
}

func trimDecimal(s string) string {
	s = strings.TrimRight(s, "0")
	s = strings.TrimSuffix(s, ".")
	if s == "-0" {
		return "0"
	}
	return s
}

func TestIncrByFloatErrors(t *testing.T) {
	f := func(cur, incr string, want error) {
		t.Helper()
		c := []byte(cur)
		dst := []byte("keep")
		got, err := IncrByFloat(dst, c, []byte(incr))
		if err != want {
			t.Errorf("%q + %q: error %v, want %v", cur, incr, err, want)
		}
		if err != nil && string(got) != "keep" {
			t.Errorf("%q + %q: dst changed on error: %q", cur, incr, got)
		}
	}
	f("0", "1", nil)
	f("", "1", ErrNotFloat)
	f("abc", "1", ErrNotFloat)
	f("1", "abc", ErrNotFloat)
	f("0", "", ErrNotFloat)
	f("0", " 1", ErrNotFloat)
	f("0", "1 ", ErrNotFloat)
	f("0", "nan", ErrNotFloat)
	f("0", "1e", ErrNotFloat)
	f("0", "0x", ErrNotFloat)
	f("0", ".", ErrNotFloat)
	f("0", "1e99999999999999999999", ErrNotFloat)
	f("0", "1e-99999999999999999999", ErrNotFloat)
	f("0", "0e99999999999999999999", nil)
	f("0", "inf", ErrNaNInf)
	f("0", "-Infinity", ErrNaNInf)
	f("inf", "1", ErrNaNInf)
	f("0", strings.Repeat("1", maxFloatChars), ErrNotFloat)
	f("1.18973149535723176502e+4932", "1.18973149535723176502e+4932", ErrNaNInf)
}

// operand returns a random number text of one of the shapes strtold accepts, or something close
// to one that it refuses.
func operand(rng *rand.Rand) string {
	digits := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteByte(byte('0' + rng.IntN(10)))
		}
		return b.String()
	}
	sign := []string{"", "-", "+"}[rng.IntN(3)]
	switch rng.IntN(8) {
	case 0:
		return sign + digits(1+rng.IntN(25))
	case 1:
		return sign + digits(rng.IntN(6)) + "." + digits(rng.IntN(25))
	case 2:
		return sign + digits(1+rng.IntN(20)) + "e" + strconv.Itoa(rng.IntN(80)-40)
	case 3:
		return sign + "0." + strings.Repeat("0", rng.IntN(20)) + digits(1+rng.IntN(5))
	case 4:
		return sign + "0x" + fmt.Sprintf("%x", rng.Uint64()) + "p" + strconv.Itoa(rng.IntN(200)-100)
	case 5:
		return sign + digits(1+rng.IntN(3)) + "e" + strconv.Itoa(4900+rng.IntN(40))
	case 6:
		return sign + digits(1+rng.IntN(3)) + "e-" + strconv.Itoa(4930+rng.IntN(30))
	}
	return strconv.FormatFloat(rng.NormFloat64()*1e6, 'g', -1, 64)
}

// TestIncrByFloatMatchesRedis sends random INCRBYFLOAT calls to a real redis-server and compares
// every reply with IncrByFloat's.
func TestIncrByFloatMatchesRedis(t *testing.T) {
	conn := startRedis(t)
	r := bufio.NewReader(conn)
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 3000
	type call struct{ cur, incr string }
	calls := make([]call, n)
	var req strings.Builder
	for i := range calls {
		calls[i] = call{operand(rng), operand(rng)}
		fmt.Fprintf(&req, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$%d\r\n%s\r\n", len(calls[i].cur), calls[i].cur)
		fmt.Fprintf(&req, "*3\r\n$11\r\nINCRBYFLOAT\r\n$1\r\nk\r\n$%d\r\n%s\r\n", len(calls[i].incr), calls[i].incr)
	}
	go conn.Write([]byte(req.String()))
	fails := 0
	for _, c := range calls {
		readReply(t, r) // +OK of SET
		v := readReply(t, r)
		want := v.Str
		if v.Kind == '-' {
			want = "-" + v.Str
		}
		got, err := IncrByFloat(nil, []byte(c.cur), []byte(c.incr))
		gotS := string(got)
		if err != nil {
			gotS = "-ERR " + err.Error()
		}
		if gotS != want {
			t.Errorf("%q + %q: got %.80q, redis %.80q", c.cur, c.incr, gotS, want)
		}
		if err != nil {
			fails++
		}
	}
	// Both outcomes must be well represented for the comparison to mean something.
	if fails < n/20 || fails > n/2 {
		t.Errorf("%d of %d calls failed: operand mix is off", fails, n)
	}
}

// readReply reads one of redis-server's replies with the tests' reply parser, apart from the
// code under test.
func readReply(t *testing.T, r *bufio.Reader) resptest.Value {
	t.Helper()
	v, err := resptest.Read(r)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// startRedis starts a throwaway redis-server on a free loopback port, or skips the test.
func startRedis(t *testing.T) net.Conn {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not on PATH")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for range 100 {
		conn, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err == nil {
			t.Cleanup(func() { conn.Close() })
			conn.SetDeadline(time.Now().Add(time.Minute))
			return conn
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("redis-server did not start")
	return nil
}
