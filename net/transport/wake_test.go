package transport

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// pushHandler is lineHandler with an outbox per conn, the way pub/sub is to reach a connection:
// other goroutines append whole messages to the outbox and Wake the conn, and Serve writes the
// outbox, on the conn's own goroutine, before it serves input. It records Serves that overlap or
// follow Closed.
type pushHandler struct {
	lineHandler
	onOpen func(b *outbox)

	mu    sync.Mutex
	boxes map[Conn]*outbox
	first chan *outbox // the first conn's outbox
	bad   atomic.Value // string: the first broken guarantee
}

func newPushHandler(block bool, onOpen func(b *outbox)) *pushHandler {
	return &pushHandler{lineHandler: lineHandler{block: block}, onOpen: onOpen,
		boxes: make(map[Conn]*outbox), first: make(chan *outbox, 1)}
}

type outbox struct {
	c       Conn
	mu      sync.Mutex
	pending []byte
	serving atomic.Int32
	closed  atomic.Bool
}

// push appends msg to the outbox and wakes the conn; any goroutine may call it.
func (b *outbox) push(msg string) {
	b.mu.Lock()
	b.pending = append(b.pending, msg...)
	b.mu.Unlock()
	b.c.Wake()
}

// flush writes what was pushed. Bytes a Write refused (ErrOffload) go back to the front.
func (b *outbox) flush() error {
	b.mu.Lock()
	out := b.pending
	b.pending = nil
	b.mu.Unlock()
	if len(out) == 0 {
		return nil
	}
	err := b.c.Write(out)
	if errors.Is(err, ErrOffload) {
		b.mu.Lock()
		b.pending = append(out, b.pending...)
		b.mu.Unlock()
	}
	return err
}

func (h *pushHandler) Open(c Conn) error {
	b := &outbox{c: c}
	h.mu.Lock()
	h.boxes[c] = b
	h.mu.Unlock()
	select {
	case h.first <- b:
	default:
	}
	if h.onOpen != nil {
		h.onOpen(b)
	}
	return h.lineHandler.Open(c)
}

func (h *pushHandler) box(c Conn) *outbox {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.boxes[c]
}

func (h *pushHandler) Serve(c Conn) error {
	b := h.box(c)
	if b.serving.Add(1) != 1 {
		h.bad.CompareAndSwap(nil, "two Serves of one conn overlapped")
	}
	defer b.serving.Add(-1)
	if b.closed.Load() {
		h.bad.CompareAndSwap(nil, "Serve after Closed")
	}
	if err := b.flush(); err != nil {
		return err
	}
	return h.lineHandler.Serve(c)
}

func (h *pushHandler) Closed(c Conn) {
	h.box(c).closed.Store(true)
	h.lineHandler.Closed(c)
}

func (h *pushHandler) check(t *testing.T) {
	t.Helper()
	if bad := h.bad.Load(); bad != nil {
		t.Fatal(bad)
	}
}

// pushLine is message i of pusher p; replies of lineHandler start with '+', pushes with '>'.
func pushLine(p, i int) string { return fmt.Sprintf(">p%d-%d\r\n", p, i) }

// replyReader reads a client's lines, checks that each pusher's messages come whole and in order,
// and hands the replies' bytes on.
type replyReader struct {
	t       *testing.T
	r       *bufio.Reader
	c       net.Conn
	next    []int // per pusher, the message expected next
	replies strings.Builder
}

func newReplyReader(t *testing.T, c net.Conn, pushers int) *replyReader {
	return &replyReader{t: t, r: bufio.NewReader(c), c: c, next: make([]int, pushers)}
}

// read reads one line; it returns the pusher of a push line, or -1 for a reply.
func (rr *replyReader) read() int {
	rr.t.Helper()
	rr.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := rr.r.ReadString('\n')
	if err != nil {
		rr.t.Fatalf("reading: %v (have %q; pushes seen %v)", err, line, rr.next)
	}
	if line[0] != '>' {
		rr.replies.WriteString(line)
		return -1
	}
	var p, i int
	if _, err := fmt.Sscanf(line, ">p%d-%d\r\n", &p, &i); err != nil || p >= len(rr.next) {
		rr.t.Fatalf("broken push line %q", line)
	}
	if i != rr.next[p] {
		rr.t.Fatalf("pusher %d: message %d, want %d", p, i, rr.next[p])
	}
	rr.next[p]++
	return p
}

// TestWakeWritesPushes: goroutines push messages into a conn's outbox and Wake it, on an idle conn
// and on one that pipelines requests (in whole writes, or in pieces to a Serve that blocks in Peek
// for the rest of a line). Every message arrives whole, in its pusher's order, between replies that
// arrive whole and in request order; Serves never overlap.
func TestWakeWritesPushes(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		for _, mode := range []string{"idle", "pipelined", "pieces"} {
			t.Run(mode, func(t *testing.T) { testWakeWritesPushes(t, engine, mode) })
		}
	})
}

func testWakeWritesPushes(t *testing.T, engine, mode string) {
	const pushers, msgs = 4, 300
	h := newPushHandler(mode == "pieces", nil)
	s := startServer(t, Options{Engine: engine}, h)
	c := dial(t, s)
	b := <-h.first
	var want []byte
	if mode != "idle" {
		rng := rand.New(rand.NewPCG(5, 6))
		var req []byte
		req, want = script(rng, 500)
		go func() {
			if mode == "pieces" {
				sendPieces(c, req, rng, 9, 8)
			} else {
				c.Write(req)
			}
		}()
	}
	for p := range pushers {
		go func() {
			for i := range msgs {
				b.push(pushLine(p, i))
			}
		}()
	}
	rr := newReplyReader(t, c, pushers)
	for pushed := 0; pushed < pushers*msgs || rr.replies.Len() < len(want); {
		if rr.read() >= 0 {
			pushed++
		}
	}
	if got := rr.replies.String(); got != string(want) {
		t.Fatalf("replies differ: got %d bytes, want %d", len(got), len(want))
	}
	h.check(t)
}

// TestWakeNotLost pushes one message at a time and waits for it, while the client keeps the conn
// busy with requests, so Wakes land in every state: idle, served inline, served by a worker, about
// to be let go. A lost Wake leaves a message unwritten, and the read times out.
func TestWakeNotLost(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		h := newPushHandler(false, nil)
		s := startServer(t, Options{Engine: engine}, h)
		c := dial(t, s)
		b := <-h.first
		stop := make(chan struct{})
		defer close(stop)
		// The writer stays at most 1,000 requests ahead of the replies read: unbounded, it outran
		// the reader under -race on a loaded machine, each push queued behind an ever longer run
		// of replies, and the test took longer than the package's timeout (CI, 20 min).
		var sent, read atomic.Int64
		go func() {
			rng := rand.New(rand.NewPCG(7, 8))
			for {
				select {
				case <-stop:
					return
				default:
				}
				if sent.Load()-read.Load() > 1000 {
					time.Sleep(50 * time.Microsecond)
					continue
				}
				n := 1 + rng.IntN(20)
				sent.Add(int64(n))
				c.Write([]byte(strings.Repeat("PING\r\n", n)))
				if rng.IntN(4) == 0 {
					time.Sleep(time.Duration(rng.IntN(100)) * time.Microsecond)
				}
			}
		}()
		rr := newReplyReader(t, c, 1)
		for i := range 2000 {
			b.push(pushLine(0, i))
			// The writer never stops, so replies keep coming: bound the wait for the push itself,
			// or a lost Wake spins here until the package's timeout.
			for deadline := time.Now().Add(10 * time.Second); rr.read() < 0; {
				read.Add(1)
				if time.Now().After(deadline) {
					t.Fatalf("push %d not written 10 s after its Wake, while replies kept coming: a lost Wake", i)
				}
			}
		}
		h.check(t)
	})
}

// TestWakeDuringServe: a Wake that comes while a Serve runs, inline or on a worker, is served by a
// Serve after it, although no input follows.
func TestWakeDuringServe(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		h := newPushHandler(false, nil)
		h.onLine = func(c Conn, line []byte) error {
			if string(line) == "wake-off" && c.Inline() {
				return ErrOffload // serve this line on a worker
			}
			woke := make(chan struct{})
			go func() {
				h.box(c).push(pushLine(0, 0))
				close(woke)
			}()
			<-woke
			return nil
		}
		s := startServer(t, Options{Engine: engine}, h)
		c := dial(t, s)
		rr := newReplyReader(t, c, 1)
		for i := range 300 {
			line := []string{"wake", "wake-off"}[i%2]
			c.Write([]byte(line + "\r\n"))
			rr.next[0] = 0
			for pushes, replies := 0, 0; pushes+replies < 2; {
				if rr.read() == 0 {
					pushes++
				} else {
					replies++
				}
			}
		}
		h.check(t)
	})
}

// TestWakeDuringOpen: a Wake from inside Open (on the accepting poller, for netpoll) is served once
// Open returned, with no input from the client.
func TestWakeDuringOpen(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		h := newPushHandler(false, func(b *outbox) { b.push(pushLine(0, 0)) })
		s := startServer(t, Options{Engine: engine}, h)
		c := dial(t, s)
		if rr := newReplyReader(t, c, 1); rr.read() != 0 {
			t.Fatal("a reply instead of the pushed message")
		}
		h.check(t)
	})
}

// TestConcurrentCloseWake: pushers on several goroutines Wake conns while others Close them; the
// race detector checks the rest. Closed runs exactly once per conn and no Serve follows it.
func TestConcurrentCloseWake(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		var wg sync.WaitGroup
		h := newPushHandler(false, nil)
		h.onOpen = func(b *outbox) {
			for p := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; b.c.IsActive(); i++ {
						b.push(pushLine(p, i))
					}
				}()
			}
			for range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					time.Sleep(time.Millisecond)
					b.c.Close()
				}()
			}
		}
		s := startServer(t, Options{Engine: engine}, h)
		const conns = 20
		for range conns {
			c := dial(t, s)
			go io.Copy(io.Discard, c)
		}
		eventually(t, "all Closed", func() bool { return h.closes.Load() == conns })
		wg.Wait()
		if once, more := h.closedCounts(); once != conns || more != 0 {
			t.Fatalf("Closed once for %d conns, more than once for %d", once, more)
		}
		h.check(t)
	})
}
