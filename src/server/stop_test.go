package server

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hotkv/hotkv/net/transport"
)

// stuckHandler is the server's handler with a Serve that blocks until release is closed, as a
// bug that never returns would.
type stuckHandler struct {
	*handler
	once    sync.Once
	serving chan struct{} // closed when the first Serve is stuck
	release chan struct{}
}

func (h *stuckHandler) Serve(c transport.Conn) error {
	h.once.Do(func() { close(h.serving) })
	<-h.release
	return h.handler.Serve(c)
}

// Stop gives up on a connection whose Serve never returns after the grace period, and says how
// many it left open; the connection ends once its Serve does.
func TestStopBoundedByStuckConnection(t *testing.T) {
	for _, engine := range []string{"netpoll", "std"} {
		t.Run(engine, func(t *testing.T) { testStopBounded(t, engine) })
	}
}

func testStopBounded(t *testing.T, engine string) {
	s := newTestServer(t)
	logs := captureLog(s)
	s.grace = 100 * time.Millisecond
	h := &stuckHandler{handler: &handler{s: s}, serving: make(chan struct{}), release: make(chan struct{})}
	tr, err := transport.Listen(transport.Options{Addrs: []string{"127.0.0.1:0"}, Engine: engine}, h)
	if err != nil {
		t.Fatal(err)
	}
	s.tr = tr
	s.Start()
	t.Cleanup(s.Stop)
	release := sync.OnceFunc(func() { close(h.release) })
	t.Cleanup(release) // a failing test leaves no Serve stuck
	dialTestServer(t, s).send("PING")
	select {
	case <-h.serving:
	case <-time.After(5 * time.Second):
		t.Fatal("Serve was never called")
	}
	start := time.Now()
	stopped := make(chan struct{})
	go func() { s.Stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("Stop hung behind a stuck connection")
	}
	if d := time.Since(start); d < s.grace {
		t.Fatalf("Stop returned after %v, before the grace period %v", d, s.grace)
	}
	if log := logs.String(); !strings.Contains(log, "level=WARN") || !strings.Contains(log, "open=1") {
		t.Fatalf("Stop did not warn of the one open connection:\n%s", log)
	}
	release()
	for deadline := time.Now().Add(5 * time.Second); s.Engine.ClientCount() > 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the stuck connection did not end once its Serve returned")
		}
	}
}
