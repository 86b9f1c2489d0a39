package testfuzz

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

// endMarker closes a transcript: once its echo arrives, every earlier reply has arrived too.
const endMarker = "__end_of_transcript__"

// transcript sends raw request bytes on a fresh connection followed by an ECHO of endMarker, and
// returns every reply byte before the marker's echo.
func transcript(t *testing.T, addr, in string) string {
	t.Helper()
	c := dial(t, addr)
	go c.tryWrite(appendCommand([]byte(in), "ECHO", endMarker))
	want := "$" + strconv.Itoa(len(endMarker)) + "\r\n" + endMarker + "\r\n"
	var out []byte
	for {
		r := c.reply()
		if string(r) == want {
			return string(out)
		}
		out = append(out, r...)
	}
}

// checkTranscripts runs each input on HotKV and compares the replies with want, and with
// redis-server's replies when it is installed (which also proves want right).
func checkTranscripts(t *testing.T, cases []struct{ name, in, want string }) {
	hotkv, _ := startHotKV(t)
	redis := maybeRedis(t)
	for _, tc := range cases {
		if got := transcript(t, hotkv, tc.in); got != tc.want {
			t.Errorf("%s: HotKV replied %s, want %s", tc.name, quote(got), quote(tc.want))
		}
		if redis != "" {
			if got := transcript(t, redis, tc.in); got != tc.want {
				t.Errorf("%s: redis-server replied %s, the test expects %s", tc.name, quote(got), quote(tc.want))
			}
		}
	}
}

func TestInlineCommands(t *testing.T) {
	forEachEngine(t, func(t *testing.T) {
		checkTranscripts(t, []struct{ name, in, want string }{
			{"crlf", "PING\r\n", "+PONG\r\n"},
			{"lf only", "PING\n", "+PONG\r\n"},
			{"set get", "SET ik v\r\nGET ik\r\n", "+OK\r\n$1\r\nv\r\n"},
			{"lower case and spaces", "  echo    a   \r\n", "$1\r\na\r\n"},
			{"empty lines ignored", "\r\n\n   \r\nPING\r\n", "+PONG\r\n"},
			{"double quotes", "SET \"in k\" \"c\\x41d\\n\"\r\nGET \"in k\"\r\n", "+OK\r\n$4\r\ncAd\n\r\n"},
			{"single quotes", "ECHO 'it\\'s'\r\n", "$4\r\nit's\r\n"},
			{"binary escapes", "ECHO \"\\x00\\xff\"\r\n", "$2\r\n\x00\xff\r\n"},
			{"empty quoted arg", "ECHO \"\"\r\n", "$0\r\n\r\n"},
			{"inline then multibulk", "PING a\r\n*1\r\n$4\r\nPING\r\n", "$1\r\na\r\n+PONG\r\n"},
			{"unknown inline", "NOSUCH x y\r\n",
				"-ERR unknown command 'NOSUCH', with args beginning with: 'x' 'y' \r\n"},
			{"wrong arity inline", "GET\r\n", "-ERR wrong number of arguments for 'get' command\r\n"},
			{"empty multibulk ignored", "*0\r\n*-1\r\nPING\r\n", "+PONG\r\n"},
		})
	})
}

func TestPipeline10000(t *testing.T) {
	forEachEngine(t, func(t *testing.T) {
		hotkv, _ := startHotKV(t)
		redis := maybeRedis(t)
		const n = 10000
		var req []byte
		var want strings.Builder
		for i := range n {
			k := "p:" + strconv.Itoa(i/4%100)
			switch i % 4 {
			case 0:
				v := strconv.Itoa(i)
				req = appendCommand(req, "SET", k, v)
				want.WriteString("+OK\r\n")
			case 1: // the value the SET just before stored
				v := strconv.Itoa(i - 1)
				req = appendCommand(req, "GET", k)
				want.WriteString("$" + strconv.Itoa(len(v)) + "\r\n" + v + "\r\n")
			case 2:
				req = appendCommand(req, "INCR", "p:counter")
				want.WriteString(":" + strconv.Itoa(i/4+1) + "\r\n")
			case 3:
				req = appendCommand(req, "ECHO", k)
				want.WriteString("$" + strconv.Itoa(len(k)) + "\r\n" + k + "\r\n")
			}
		}
		for _, addr := range []string{hotkv, redis} {
			if addr == "" {
				continue
			}
			if got := transcript(t, addr, string(req)); got != want.String() {
				at := firstDiff(got, want.String())
				t.Errorf("%s: 10000-command pipeline replies differ at byte %d: got %s, want %s",
					addr, at, quote(got[at:]), quote(want.String()[at:]))
			}
		}
	})
}

func firstDiff(a, b string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// protocolErrorCases are malformed requests; the server answers the commands before the error,
// then the error, then closes the connection (Redis networking.c, 7.0.15).
var protocolErrorCases = []struct{ name, in, want string }{
	{"invalid multibulk length", "*abc\r\n", "-ERR Protocol error: invalid multibulk length\r\n"},
	{"multibulk length over int32", "*2147483648\r\n", "-ERR Protocol error: invalid multibulk length\r\n"},
	{"invalid bulk length", "*1\r\n$abc\r\n", "-ERR Protocol error: invalid bulk length\r\n"},
	{"negative bulk length", "*1\r\n$-1\r\n", "-ERR Protocol error: invalid bulk length\r\n"},
	{"bulk length int64 max", "*2\r\n$3\r\nGET\r\n$9223372036854775807\r\n",
		"-ERR Protocol error: invalid bulk length\r\n"},
	{"bulk length over proto-max-bulk-len", "*2\r\n$3\r\nGET\r\n$536870913\r\n",
		"-ERR Protocol error: invalid bulk length\r\n"},
	{"expected dollar", "*1\r\nfoo\r\n", "-ERR Protocol error: expected '$', got 'f'\r\n"},
	{"expected dollar after pong", "PING\r\n*2\r\n$4\r\nECHO\r\n:1\r\n",
		"+PONG\r\n-ERR Protocol error: expected '$', got ':'\r\n"},
	{"unbalanced double quote", "SET \"a b\r\n", "-ERR Protocol error: unbalanced quotes in request\r\n"},
	{"unbalanced single quote", "ECHO 'it''s'\r\n", "-ERR Protocol error: unbalanced quotes in request\r\n"},
	{"commands before error run", "SET pe 1\r\nGET pe\r\n*x\r\n",
		"+OK\r\n$1\r\n1\r\n-ERR Protocol error: invalid multibulk length\r\n"},
	{"too big inline request", strings.Repeat("a", 80*1024),
		"-ERR Protocol error: too big inline request\r\n"},
	{"too big mbulk count string", "*" + strings.Repeat("1", 80*1024),
		"-ERR Protocol error: too big mbulk count string\r\n"},
	{"too big bulk count string", "*1\r\n$" + strings.Repeat("1", 80*1024),
		"-ERR Protocol error: too big bulk count string\r\n"},
}

func TestProtocolErrors(t *testing.T) {
	forEachEngine(t, func(t *testing.T) {
		hotkv, _ := startHotKV(t)
		redis := maybeRedis(t)
		for _, tc := range protocolErrorCases {
			for _, addr := range []string{hotkv, redis} {
				if addr == "" {
					continue
				}
				c := dial(t, addr)
				go c.tryWrite([]byte(tc.in))
				expectClose(t, c, 10*time.Second, tc.name, tc.want)
			}
		}
		// The server still serves after all those errors.
		if got := dial(t, hotkv).do("PING"); got != "+PONG\r\n" {
			t.Errorf("PING after protocol errors = %s", quote(got))
		}
	})
}

func TestQuitClosesAfterOK(t *testing.T) {
	forEachEngine(t, func(t *testing.T) {
		hotkv, _ := startHotKV(t)
		redis := maybeRedis(t)
		for _, addr := range []string{hotkv, redis} {
			if addr == "" {
				continue
			}
			c := dial(t, addr)
			c.write([]byte("PING\r\nQUIT\r\nPING\r\n"))
			expectClose(t, c, 10*time.Second, "PING QUIT PING", "+PONG\r\n+OK\r\n")
		}
	})
}

// Requests split at arbitrary byte boundaries (a bulk cut mid-length, a CRLF cut in two, a 70KB
// argument arriving over many reads) get exactly the replies of the same bytes sent at once.
func TestFragmentedRequests(t *testing.T) {
	forEachEngine(t, func(t *testing.T) {
		hotkv, _ := startHotKV(t)
		redis := maybeRedis(t)
		in := fragmentStream()
		whole := transcript(t, hotkv, in)
		if !strings.Contains(whole, "$70000\r\n") {
			t.Fatalf("the unfragmented stream did not round-trip its 70000-byte value: %s", quote(whole))
		}
		r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
		for _, addr := range []string{hotkv, redis} {
			if addr == "" {
				continue
			}
			if got := fragmentedTranscript(t, addr, in, r); got != whole {
				at := firstDiff(got, whole)
				t.Errorf("%s: fragmented replies differ at byte %d: got %s, unfragmented HotKV %s",
					addr, at, quote(got[at:]), quote(whole[at:]))
			}
		}
	})
}

func fragmentStream() string {
	var b []byte
	for i, size := range []int{0, 1, 9, 10, 100, 16384, 70000, 3} {
		k := "frag:" + strconv.Itoa(i)
		v := strings.Repeat(string(rune('a'+i)), size)
		b = appendCommand(b, "SET", k, v)
		b = append(b, "GET "+k+"\r\n"...)
		b = appendCommand(b, "APPEND", k, "xy")
		b = appendCommand(b, "STRLEN", k)
		b = append(b, "PING\n"...)
		b = appendCommand(b, "GET", k)
	}
	return string(b)
}

// fragmentedTranscript is transcript with the request written in random pieces of 1..300 bytes,
// pausing now and then so pieces arrive in separate reads.
func fragmentedTranscript(t *testing.T, addr, in string, r *rand.Rand) string {
	t.Helper()
	c := dial(t, addr)
	req := appendCommand([]byte(in), "ECHO", endMarker)
	wr := rand.New(rand.NewPCG(r.Uint64(), r.Uint64())) // the writer's own: r stays with the caller
	written := make(chan struct{})
	defer func() { <-written }()
	go func() {
		defer close(written)
		for len(req) > 0 {
			n := min(len(req), 1+wr.IntN(300))
			if c.tryWrite(req[:n]) != nil {
				return
			}
			req = req[n:]
			if wr.IntN(20) == 0 {
				time.Sleep(time.Millisecond)
			}
		}
	}()
	want := "$" + strconv.Itoa(len(endMarker)) + "\r\n" + endMarker + "\r\n"
	var out []byte
	for {
		rep := c.reply()
		if string(rep) == want {
			return string(out)
		}
		out = append(out, rep...)
	}
}
