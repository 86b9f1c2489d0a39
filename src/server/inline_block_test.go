package server

import (
	"io"
	"testing"
	"time"
)

// Inline blocking commands with quoted arguments, on both transports, answer as redis-server
// 7.0.15 answers this exact input (recorded by hand). netpoll serves a batch that must block again
// from the top on a worker; the first parse used to unescape the quotes in place, so the second
// read different bytes and answered "Protocol error: unbalanced quotes", closing the connection.
func TestInlineQuotedBlockingCommands(t *testing.T) {
	const in = "BLPOP k ' 1'\r\nBLPOP k '0.05'\r\nRPUSH \"k\" 'a b'\r\nBLPOP k \"0\"\r\n"
	const want = "-ERR timeout is not a float or out of range\r\n*-1\r\n:1\r\n*2\r\n$1\r\nk\r\n$3\r\na b\r\n"
	forEachTransport(t, func(t *testing.T) {
		s := startTestServer(t)
		c := dialRaw(t, s.Addrs()[0].String())
		c.c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.w.WriteString(in); err != nil {
			t.Fatal(err)
		}
		c.w.Flush()
		got := make([]byte, len(want))
		if _, err := io.ReadFull(c.r, got); err != nil || string(got) != want {
			t.Fatalf("got %q, %v; want %q", got, err, want)
		}
	})
}
