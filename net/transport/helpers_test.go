package transport

import (
	"bytes"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var engines = []string{"netpoll", "std"}

// forEngines runs f once per engine, as a subtest named after it.
func forEngines(t *testing.T, f func(t *testing.T, engine string)) {
	for _, e := range engines {
		t.Run(e, func(t *testing.T) { f(t, e) })
	}
}

// lineHandler is a tiny line protocol: "PING\r\n" gets "+PONG\r\n", any other line L gets "+L\r\n".
// With block set, Serve waits in Peek for the rest of a partial line; otherwise it returns leaving it.
type lineHandler struct {
	block  bool
	fill   bool               // on a partial line, call Fill first (as the pipeline does) and count what it added
	onOpen func(c Conn) error // optional
	onLine func(c Conn, line []byte) error

	opens, serves, closes atomic.Int64
	fills                 atomic.Int64 // Fill calls that added bytes
	mu                    sync.Mutex
	closed                map[Conn]int // Closed calls per conn
}

type lineState struct{ out []byte }

func (h *lineHandler) Open(c Conn) error {
	h.opens.Add(1)
	c.SetState(&lineState{out: make([]byte, 0, 4096)})
	if h.onOpen != nil {
		return h.onOpen(c)
	}
	return nil
}

func (h *lineHandler) Closed(c Conn) {
	h.mu.Lock()
	if h.closed == nil {
		h.closed = make(map[Conn]int)
	}
	h.closed[c]++
	h.mu.Unlock()
	h.closes.Add(1) // last, so that a test seeing the count also sees the map
}

// Serve counts its calls, except those that end in ErrOffload: such a Serve is called again, off
// the poller, for the same bytes (offload.go).
func (h *lineHandler) Serve(c Conn) error {
	h.serves.Add(1)
	err := h.serve(c)
	if errors.Is(err, ErrOffload) {
		h.serves.Add(-1)
	}
	return err
}

func (h *lineHandler) serve(c Conn) error {
	st := c.State().(*lineState)
	for {
		buf, err := c.Peek(c.Len())
		if err != nil {
			return err
		}
		if h.fill && !bytes.HasSuffix(buf, []byte("\r\n")) && c.Fill() {
			h.fills.Add(1)
			if buf, err = c.Peek(c.Len()); err != nil {
				return err
			}
		}
		out, used := st.out[:0], 0
		for {
			i := bytes.Index(buf[used:], []byte("\r\n"))
			if i < 0 {
				break
			}
			line := buf[used : used+i]
			if h.onLine != nil {
				if err := h.onLine(c, line); err != nil {
					return err
				}
			}
			out = appendReply(out, line)
			used += i + 2
		}
		st.out = out
		if len(out) > 0 {
			if err := c.Write(out); err != nil {
				return err
			}
		}
		c.Skip(used)
		c.Release()
		if c.Len() == 0 || !h.block {
			return nil
		}
		// A partial line: wait for one more byte, then parse again.
		if _, err := c.Peek(c.Len() + 1); err != nil {
			return err
		}
	}
}

func appendReply(out, line []byte) []byte {
	if string(line) == "PING" {
		return append(out, "+PONG\r\n"...)
	}
	out = append(out, '+')
	out = append(out, line...)
	return append(out, "\r\n"...)
}

// closedCounts returns how many conns got Closed once, and how many more than once.
func (h *lineHandler) closedCounts() (once, more int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, n := range h.closed {
		if n == 1 {
			once++
		} else {
			more++
		}
	}
	return once, more
}

// startServer listens on a free loopback port and serves until the test ends.
func startServer(t testing.TB, opts Options, h Handler) *Server {
	t.Helper()
	if opts.Addrs == nil {
		opts.Addrs = []string{"127.0.0.1:0"}
	}
	s, err := Listen(opts, h)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve() }()
	t.Cleanup(func() {
		s.Close()
		if err := <-served; err != nil && err != ErrServerClosed { // closed before Serve started
			t.Errorf("Serve: %v", err)
		}
	})
	return s
}

func dial(t testing.TB, s *Server) *net.TCPConn {
	t.Helper()
	c, err := net.Dial("tcp", s.Addrs()[0].String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c.(*net.TCPConn)
}

// readN reads exactly n bytes or fails the test after a deadline.
func readN(t testing.TB, c net.Conn, n int) []byte {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, n)
	for got := 0; got < n; {
		m, err := c.Read(buf[got:])
		if err != nil {
			t.Fatalf("read %d of %d bytes: %v (have %q)", got, n, err, buf[:got])
		}
		got += m
	}
	return buf
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
