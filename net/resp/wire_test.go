package resp

import (
	"strings"
	"sync"
	"testing"
)

// wireCase is raw client input and what the server writes back: the replies to the complete commands,
// then, after a protocol error, the error and a closed connection. The expectations were read from
// redis-server 7.0.15; TestWire checks them against Parse and, when it is installed, against Redis.
type wireCase struct {
	name   string
	in     string
	want   string
	closed bool
}

const (
	pong       = "+PONG\r\n"
	errPrefix  = "-ERR Protocol error: "
	invMbulk   = errPrefix + "invalid multibulk length\r\n"
	invBulk    = errPrefix + "invalid bulk length\r\n"
	long64k    = 64 * 1024
	longEnough = long64k + 1 // the first length Redis rejects without an end of line
)

var multibulkCases = []wireCase{
	{"ping", "*1\r\n$4\r\nPING\r\n", pong, false},
	{"binary arg", "*2\r\n$4\r\nECHO\r\n$5\r\na\x00\r\nb\r\n", "$5\r\na\x00\r\nb\r\n", false},
	{"empty arg", "*2\r\n$4\r\nECHO\r\n$0\r\n\r\n", "$0\r\n\r\n", false},
	{"zero count skipped", "*0\r\n*1\r\n$4\r\nPING\r\n", pong, false},
	{"null count skipped", "*-1\r\n*1\r\n$4\r\nPING\r\n", pong, false},
	{"negative count skipped", "*-5\r\nPING\r\n", pong, false},
	{"min int64 count skipped", "*-9223372036854775808\r\n*1\r\n$4\r\nPING\r\n", pong, false},
	{"bytes after body unchecked", "*1\r\n$4\r\nPINGxx", pong, false},
	{"byte after count CR unchecked", "*1\rX$4\r\nPING\r\n", pong, false},
	{"byte after bulk CR unchecked", "*1\r\n$4\r?PING\r\n", pong, false},
	{"pipeline", "*1\r\n$4\r\nPING\r\n*2\r\n$4\r\necho\r\n$2\r\nhi\r\nPING\r\n", pong + "$2\r\nhi\r\n" + pong, false},
	{"count INT_MAX waits", "*2147483647\r\n", "", false},
	{"count line without LF waits", "*1\r", "", false},
	{"header without LF waits", "*1\r\n$4\r", "", false},
	{"max bulk waits", "*1\r\n$536870912\r\n", "", false},
	{"empty count", "*\r\n", invMbulk, true},
	{"count with plus", "*+1\r\n", invMbulk, true},
	{"count with leading zero", "*01\r\n", invMbulk, true},
	{"count with space", "* 1\r\n", invMbulk, true},
	{"count minus only", "*-\r\n", invMbulk, true},
	{"minus zero count", "*-0\r\n", invMbulk, true},
	{"count over INT_MAX", "*2147483648\r\n", invMbulk, true},
	{"count 21 bytes", "*100000000000000000000\r\n", invMbulk, true},
	{"count below int64", "*-9223372036854775809\r\n", invMbulk, true},
	{"error after a command", "*1\r\n$4\r\nPING\r\n*x\r\n", pong + invMbulk, true},
	{"expected dollar", "*1\r\n+4\r\nPING\r\n", errPrefix + "expected '$', got '+'\r\n", true},
	{"expected dollar after arg", "*3\r\n$3\r\nSET\r\n$1\r\nx\r\nfooz\r\n", errPrefix + "expected '$', got 'f'\r\n", true},
	{"expected dollar got CR", "*1\r\n\r\n", errPrefix + "expected '$', got ' '\r\n", true},
	{"expected dollar got LF", "*1\r\n\n\r\n", errPrefix + "expected '$', got ' '\r\n", true},
	{"expected dollar got high byte", "*1\r\n\xff\r\n", errPrefix + "expected '$', got '\xff'\r\n", true},
	{"negative bulk", "*1\r\n$-1\r\n", invBulk, true},
	{"empty bulk length", "*1\r\n$\r\n", invBulk, true},
	{"bulk with plus", "*1\r\n$+1\r\n", invBulk, true},
	{"bulk with leading zero", "*1\r\n$01\r\na\r\n", invBulk, true},
	{"bulk over proto-max-bulk-len", "*1\r\n$536870913\r\n", invBulk, true},
	{"bulk max int64", "*1\r\n$9223372036854775807\r\n", invBulk, true},
	{"bulk over int64", "*1\r\n$9223372036854775808\r\n", invBulk, true},
	{"NUL hides count end", "*1\x00\r\n$4\r\nPING\r\n", "", false},
	{"NUL hides bulk header end", "*1\r\n$4\x00\r\nPING\r\n", "", false},
	{"count line of 64KB waits", "*" + strings.Repeat("1", long64k-1), "", false},
	{"count line over 64KB", "*" + strings.Repeat("1", long64k), errPrefix + "too big mbulk count string\r\n", true},
	{"count line ends just in time", "*" + strings.Repeat("1", long64k-1) + "\r\n", invMbulk, true},
	{"NUL count line over 64KB", "*1\x00" + strings.Repeat("\r", longEnough-3), errPrefix + "too big mbulk count string\r\n", true},
	{"bulk header of 64KB waits", "*1\r\n$" + strings.Repeat("1", long64k-1), "", false},
	{"bulk header over 64KB", "*1\r\n$" + strings.Repeat("1", long64k), errPrefix + "too big bulk count string\r\n", true},
	{"non-dollar header over 64KB", "*1\r\nX" + strings.Repeat("1", long64k), errPrefix + "too big bulk count string\r\n", true},
}

var inlineCases = []wireCase{
	{"inline ping", "PING\r\n", pong, false},
	{"LF only", "PING\n", pong, false},
	{"only one CR stripped", "PING\r\r\n", pong, false},
	{"case insensitive", "pInG\r\n", pong, false},
	{"blank lines skipped", "\r\n\n  \r\n PING  \r\n", pong, false},
	{"vertical tab and form feed are blanks", "\v PING \f\r\n", pong, false},
	{"vertical tab inside an argument", "ECHO a\vb\r\n", "$3\r\na\vb\r\n", false},
	{"CR splits arguments", "ECHO a\rb\r\n", "-ERR wrong number of arguments for 'echo' command\r\n", false},
	{"tabs split arguments", "ECHO\ta\t\r\n", "$1\r\na\r\n", false},
	{"double quote escapes", `ECHO "a\x41\n\t\r\b\a\q\"\\"` + "\r\n", "$10\r\naA\n\t\r\b\aq\"\\\r\n", false},
	{"hex escape mixed case", `ECHO "\xAf\xfF"` + "\r\n", "$2\r\n\xaf\xff\r\n", false},
	{"bad hex escape", `ECHO "\x4g"` + "\r\n", "$3\r\nx4g\r\n", false},
	{"short hex escape", `ECHO "\x4"` + "\r\n", "$2\r\nx4\r\n", false},
	{"single quote escapes", `ECHO 'b\'c\n'` + "\r\n", "$5\r\nb'c\\n\r\n", false},
	{"quote inside argument", `ECHO x"a b"` + "\r\n", "$4\r\nxa b\r\n", false},
	{"quoted CR kept", "ECHO \"a\rb\"\r\n", "$3\r\na\rb\r\n", false},
	{"empty quotes", `ECHO ""` + "\r\n" + `ECHO ''` + "\r\n", "$0\r\n\r\n$0\r\n\r\n", false},
	{"quote closed before vertical tab", "ECHO \"a\"\v\r\n", "$1\r\na\r\n", false},
	{"high bytes", "ECHO \xe9\xff\r\n", "$2\r\n\xe9\xff\r\n", false},
	{"inline then multibulk", "PING\r\n*1\r\n$4\r\nPING\r\n", pong + pong, false},
	{"incomplete line waits", "PING", "", false},
	{"NUL hides the line end", "PING\x00\r\n", "", false},
	{"NUL after a command", "PING\r\nPING\x00\r\n", pong, false},
	{"text after double quote", `ECHO "a"b` + "\r\n", errPrefix + "unbalanced quotes in request\r\n", true},
	{"text after single quote", `ECHO 'a'b` + "\r\n", errPrefix + "unbalanced quotes in request\r\n", true},
	{"unterminated double quote", `ECHO "a` + "\r\n", errPrefix + "unbalanced quotes in request\r\n", true},
	{"unterminated single quote", `ECHO 'a` + "\r\n", errPrefix + "unbalanced quotes in request\r\n", true},
	{"backslash at end of quote", `ECHO "a\` + "\r\n", errPrefix + "unbalanced quotes in request\r\n", true},
	{"escaped closing quote", `ECHO "a\"` + "\r\n", errPrefix + "unbalanced quotes in request\r\n", true},
	{"command then unbalanced", "PING\r\n\"\r\n", pong + errPrefix + "unbalanced quotes in request\r\n", true},
	{"inline of 64KB waits", strings.Repeat("a", long64k), "", false},
	{"inline over 64KB", strings.Repeat("a", longEnough), errPrefix + "too big inline request\r\n", true},
	{"NUL inline over 64KB", "a\x00" + strings.Repeat("\n", longEnough-2), errPrefix + "too big inline request\r\n", true},
}

var unauthCases = []wireCase{
	{"10 args allowed", "*10\r\n", "", false},
	{"11 args", "*11\r\n", errPrefix + "unauthenticated multibulk length\r\n", true},
	{"over INT_MAX first", "*2147483648\r\n", invMbulk, true},
	{"16384 bytes allowed", "*1\r\n$16384\r\n", "", false},
	{"16385 bytes", "*1\r\n$16385\r\n", errPrefix + "unauthenticated bulk length\r\n", true},
	{"negative bulk first", "*1\r\n$-1\r\n", invBulk, true},
	{"over max bulk first", "*1\r\n$536870913\r\n", invBulk, true},
	{"inline command", "PING\r\n", "-NOAUTH Authentication required.\r\n", false},
	{"negative count skipped", "*-20\r\n*1\r\n$4\r\nPING\r\n", "-NOAUTH Authentication required.\r\n", false},
	{"command then too many args", "*1\r\n$4\r\nPING\r\n*11\r\n",
		"-NOAUTH Authentication required.\r\n" + errPrefix + "unauthenticated multibulk length\r\n", true},
}

func TestWire(t *testing.T) {
	auth := DefaultLimits()
	auth.Unauthenticated = true
	groups := []struct {
		name   string
		cases  []wireCase
		lim    Limits
		answer func([][]byte) string
	}{
		{"multibulk", multibulkCases, DefaultLimits(), pingEcho},
		{"inline", inlineCases, DefaultLimits(), pingEcho},
		{"unauthenticated", unauthCases, auth, noAuth},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			for _, tc := range g.cases {
				out, closed := serve([]byte(tc.in), g.lim, g.answer)
				if out != tc.want || closed != tc.closed {
					t.Errorf("%s: Parse gives %q closed=%v, want %q closed=%v", tc.name, out, closed, tc.want, tc.closed)
				}
			}
		})
	}
	for _, g := range groups {
		t.Run("redis/"+g.name, func(t *testing.T) {
			addr := redisAddr(t, g.lim.Unauthenticated)
			checkRedis(t, addr, g.cases)
		})
	}
}

// checkRedis sends the cases to the server concurrently, each on its own connection (most cases wait
// out idleWait, and t.Parallel is capped at GOMAXPROCS), and compares the answers.
func checkRedis(t *testing.T, addr string, cases []wireCase) {
	type result struct {
		out    string
		closed bool
		err    error
	}
	results := make([]result, len(cases))
	var wg sync.WaitGroup
	slots := make(chan struct{}, 64) // stay well under the server's and this process's file limits
	for i, tc := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slots <- struct{}{}
			defer func() { <-slots }()
			r := &results[i]
			r.out, r.closed, r.err = exchange(addr, []byte(tc.in))
		}()
	}
	wg.Wait()
	for i, tc := range cases {
		r := results[i]
		switch {
		case r.err != nil:
			t.Errorf("%s: %v", tc.name, r.err)
		case r.out != tc.want || r.closed != tc.closed:
			t.Errorf("%s: redis-server answers %q closed=%v, want %q closed=%v", tc.name, r.out, r.closed, tc.want, tc.closed)
		}
	}
}
