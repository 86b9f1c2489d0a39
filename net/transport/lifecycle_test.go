package transport

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestCloseDuringBlockedPeek: Close from another goroutine wakes a Serve blocked in Peek with ErrClosed,
// the client sees the close, and Closed runs once, after Serve returned.
func TestCloseDuringBlockedPeek(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		peekErr := make(chan error, 1)
		var inServe atomic.Bool
		h := &funcHandler{
			conns:  make(chan Conn, 1),
			closes: make(chan Conn, 1),
			serve: func(c Conn) error {
				inServe.Store(true)
				defer inServe.Store(false)
				_, err := c.Peek(c.Len() + 100)
				if errors.Is(err, ErrOffload) {
					return err // served inline: called again where Peek may block
				}
				peekErr <- err
				return err
			},
		}
		s := startServer(t, Options{Engine: engine}, h)
		c := dial(t, s)
		sc := <-h.conns
		c.Write([]byte("half"))
		eventually(t, "Serve blocked in Peek", inServe.Load)
		time.Sleep(20 * time.Millisecond)
		go sc.Close()
		if err := <-peekErr; !errors.Is(err, ErrClosed) {
			t.Fatalf("blocked Peek returned %v, want ErrClosed", err)
		}
		if got := <-h.closes; got != sc {
			t.Fatal("Closed for another conn")
		}
		if inServe.Load() {
			t.Fatal("Closed ran while Serve was still running")
		}
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err == nil {
			t.Fatal("client still connected")
		}
		if sc.IsActive() || sc.Write([]byte("x")) != ErrClosed || sc.Close() != nil {
			t.Fatal("closed conn still usable or Close not idempotent")
		}
	})
}

// TestManyConns: 1000 concurrent clients each get their replies; every conn is opened and closed once.
func TestManyConns(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		const conns = 1000
		h := &lineHandler{}
		s := startServer(t, Options{Engine: engine, Backlog: conns}, h)
		var wg sync.WaitGroup
		errs := make(chan error, conns)
		for i := range conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- pingConn(s.Addrs()[0].String(), i)
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		eventually(t, "all Closed", func() bool { return h.closes.Load() == conns })
		if once, more := h.closedCounts(); h.opens.Load() != conns || once != conns || more != 0 {
			t.Fatalf("opens %d, Closed once %d, more than once %d", h.opens.Load(), once, more)
		}
	})
}

func pingConn(addr string, i int) error {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	want := "+PONG\r\n+client\r\n"
	if _, err := c.Write([]byte("PING\r\nclient\r\n")); err != nil {
		return err
	}
	got := make([]byte, len(want))
	if _, err := io.ReadFull(c, got); err != nil || string(got) != want {
		return fmt.Errorf("conn %d: got %q: %v", i, got, err)
	}
	return nil
}

// TestIdleTimeout: a conn silent past its timeout is closed; one that keeps talking is not.
func TestIdleTimeout(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		h := &lineHandler{onOpen: func(c Conn) error { return c.SetIdleTimeout(300 * time.Millisecond) }}
		s := startServer(t, Options{Engine: engine}, h)
		idle, busy := dial(t, s), dial(t, s)
		start := time.Now()
		stop := make(chan struct{})
		go func() {
			for {
				select {
				case <-stop:
					return
				case <-time.After(100 * time.Millisecond):
					busy.Write([]byte("PING\r\n"))
				}
			}
		}()
		defer close(stop)
		idle.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := idle.Read(make([]byte, 1)); err == nil {
			t.Fatal("idle conn got data instead of a close")
		}
		if d := time.Since(start); d < 300*time.Millisecond || d > 3*time.Second {
			t.Fatalf("idle conn closed after %v, want about 300ms", d)
		}
		time.Sleep(400 * time.Millisecond)
		if h.closes.Load() != 1 {
			t.Fatalf("%d conns closed, want only the idle one", h.closes.Load())
		}
	})
}

// TestServerCloseWaits: Close returns only after Closed ran for every conn, including one blocked in
// Peek and one whose Closed is slow; later dials are refused.
func TestServerCloseWaits(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		var closed atomic.Int64
		h := &lineHandler{block: true}
		slow := &slowClosed{Handler: h, closed: &closed}
		s, err := Listen(Options{Addrs: []string{"127.0.0.1:0"}, Engine: engine}, slow)
		if err != nil {
			t.Fatal(err)
		}
		served := make(chan error, 1)
		go func() { served <- s.Serve() }()
		const conns = 10
		for i := range conns {
			c := dial(t, s)
			if i == 0 {
				c.Write([]byte("PING\r\nPI")) // leaves the handler blocked in Peek
				readN(t, c, 7)
			}
		}
		eventually(t, "all opened", func() bool { return h.opens.Load() == conns })
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if n := closed.Load(); n != conns {
			t.Fatalf("Close returned after %d of %d Closed calls", n, conns)
		}
		if err := <-served; err != nil {
			t.Fatalf("Serve returned %v", err)
		}
		if c, err := net.DialTimeout("tcp", s.Addrs()[0].String(), time.Second); err == nil {
			c.Close()
			t.Fatal("dial succeeded after Close")
		}
		if s.Close() != nil || s.Serve() != ErrServerClosed {
			t.Fatal("second Close or Serve after Close misbehaved")
		}
	})
}

type slowClosed struct {
	Handler
	closed *atomic.Int64
}

func (h *slowClosed) Closed(c Conn) {
	time.Sleep(20 * time.Millisecond)
	h.Handler.Closed(c)
	h.closed.Add(1)
}

// TestCloseUnblocksWrite: a client that never reads fills the socket, so Serve blocks in Write (the
// backpressure point); Server.Close must still close it and return.
func TestCloseUnblocksWrite(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		writeErr := make(chan error, 1)
		h := &funcHandler{serve: func(c Conn) error {
			chunk := make([]byte, 1<<20)
			for {
				if err := c.Write(chunk); err != nil {
					if !errors.Is(err, ErrOffload) {
						writeErr <- err
					}
					return err
				}
			}
		}}
		s, err := Listen(Options{Addrs: []string{"127.0.0.1:0"}, Engine: engine}, h)
		if err != nil {
			t.Fatal(err)
		}
		go s.Serve()
		c := dial(t, s)
		c.SetReadBuffer(4096)
		c.Write([]byte("go\r\n"))
		time.Sleep(200 * time.Millisecond) // let the socket buffers fill
		closed := make(chan struct{})
		go func() { s.Close(); close(closed) }()
		select {
		case <-closed:
		case <-time.After(10 * time.Second):
			t.Fatal("Server.Close blocked behind a stuck Write")
		}
		select {
		case err := <-writeErr:
			if !errors.Is(err, ErrClosed) {
				t.Fatalf("stuck Write returned %v, want ErrClosed", err)
			}
		case <-time.After(time.Second):
			// netpoll serves inline: the Write that got stuck is the worker's flush of the replies
			// an inline Write kept (offload.go), and a closed conn is not served again.
			if engine != "netpoll" {
				t.Fatal("stuck Write never returned")
			}
		}
	})
}

// TestCloseBeforeServe releases the port without ever serving.
func TestCloseBeforeServe(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		s, err := Listen(Options{Addrs: []string{"127.0.0.1:0"}, Engine: engine}, &lineHandler{})
		if err != nil {
			t.Fatal(err)
		}
		addr := s.Addrs()[0].String()
		s.Close()
		if s.Serve() != ErrServerClosed {
			t.Fatal("Serve after Close did not return ErrServerClosed")
		}
		s2, err := Listen(Options{Addrs: []string{addr}, Engine: engine}, &lineHandler{})
		if err != nil {
			t.Fatalf("port not released: %v", err)
		}
		s2.Close()
	})
}
