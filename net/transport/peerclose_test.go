package transport

import (
	"errors"
	"net"
	"testing"
	"time"
)

// TestPeerCloseSeenWhileServeWaits: a Serve that waits without reading (a blocked command polls
// IsActive instead, like BLPOP) sees IsActive() == false soon after the peer goes away, whether
// the peer closes cleanly, closes after sending more input, or resets the connection. Redis
// notices such a client at once and drops it from the key's waiters.
func TestPeerCloseSeenWhileServeWaits(t *testing.T) {
	for _, tt := range []struct {
		name  string
		close func(c *net.TCPConn)
	}{
		{"fin", func(c *net.TCPConn) { c.Close() }},
		{"fin after more input", func(c *net.TCPConn) { c.Write([]byte("PING\r\n")); c.Close() }},
		{"reset", func(c *net.TCPConn) { c.SetLinger(0); c.Close() }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			forEngines(t, func(t *testing.T, engine string) { testPeerCloseSeen(t, engine, tt.close) })
		})
	}
}

func testPeerCloseSeen(t *testing.T, engine string, closePeer func(c *net.TCPConn)) {
	waiting := make(chan struct{}, 1)
	gone := make(chan time.Duration, 1)
	h := &funcHandler{conns: make(chan Conn, 1), closes: make(chan Conn, 1), serve: func(c Conn) error {
		if c.Inline() {
			return ErrOffload // as the pipeline does before a command that may block
		}
		c.Skip(c.Len())
		c.Release()
		waiting <- struct{}{}
		start := time.Now()
		for c.IsActive() && time.Since(start) < 10*time.Second {
			time.Sleep(time.Millisecond)
		}
		gone <- time.Since(start)
		return errors.New("peer gone")
	}}
	s := startServer(t, Options{Engine: engine}, h)
	c := dial(t, s)
	<-h.conns
	c.Write([]byte("BLOCK\r\n"))
	<-waiting
	time.Sleep(20 * time.Millisecond)
	closed := time.Now()
	closePeer(c)
	select {
	case <-gone:
		if d := time.Since(closed); d > 2*time.Second {
			t.Errorf("IsActive turned false %v after the peer closed", d)
		}
	case <-time.After(12 * time.Second):
		t.Fatal("Serve never returned")
	}
	select {
	case <-h.closes:
	case <-time.After(5 * time.Second):
		t.Fatal("Closed not called after the waiting Serve returned")
	}
}
