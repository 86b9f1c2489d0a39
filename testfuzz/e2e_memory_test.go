package testfuzz

import (
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hotkv/hotkv/net/resp/resptest"
)

// liveHeap returns the bytes of live heap objects after a full collection. HotKV runs in this
// process, so this is (mostly) the server's memory.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// heapWatch samples liveHeap until stopped and remembers the peak.
type heapWatch struct {
	base, peak atomic.Uint64
	stop       chan struct{}
	done       sync.WaitGroup
}

func watchHeap() *heapWatch {
	w := &heapWatch{stop: make(chan struct{})}
	w.base.Store(liveHeap())
	w.done.Add(1)
	go func() {
		defer w.done.Done()
		for {
			if h := liveHeap(); h > w.peak.Load() {
				w.peak.Store(h)
			}
			select {
			case <-w.stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	return w
}

// settle waits until the heap has grown past limit, or has reached no new peak for quiet, or for
// at most max; a slow server (as under -race) still gets to show how far it would grow.
func (w *heapWatch) settle(limit int64, quiet, max time.Duration) {
	last, since := w.peak.Load(), time.Now()
	for end := time.Now().Add(max); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		p := w.peak.Load()
		if int64(p)-int64(w.base.Load()) > limit {
			return
		}
		if p > last+1<<20 {
			last, since = p, time.Now()
		} else if time.Since(since) > quiet {
			return
		}
	}
}

// growth stops the sampling and returns the peak growth over the starting heap.
func (w *heapWatch) growth() int64 {
	close(w.stop)
	w.done.Wait()
	return int64(w.peak.Load()) - int64(w.base.Load())
}

// A declared length reserves nothing: 50 clients that each announce a 512MB argument (or two
// billion arguments) and send a few bytes leave the heap nearly unchanged, and the server keeps
// serving. The heap is judged once the server holds every client's bytes (CLIENT LIST's qbuf)
// and the heap has stopped growing.
func TestDeclaredBulkLengthReservesNoMemory(t *testing.T) {
	forEachEngine(t, func(t *testing.T) {
		hotkv, _ := startHotKV(t)
		const clients, limit = 50, 64 << 20
		w := watchHeap()
		conns := make([]*rawConn, clients)
		for i := range conns {
			conns[i] = dial(t, hotkv)
			if i%2 == 0 {
				conns[i].write([]byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$536870912\r\n0123456789"))
			} else { // the largest argument count Redis accepts, then one argument
				conns[i].write([]byte("*2147483647\r\n$3\r\nSET\r\n"))
			}
		}
		waitQueryBuffers(t, dial(t, hotkv), clients, ioTimeout)
		w.settle(limit, 300*time.Millisecond, 10*time.Second)
		if got := dial(t, hotkv).do("PING"); got != "+PONG\r\n" {
			t.Errorf("PING while %d clients hold partial 512MB bulks = %s", clients, quote(got))
		}
		if g := w.growth(); g > limit {
			t.Errorf("heap grew by %d MB with %d clients declaring 512MB bulks; want < %d MB",
				g>>20, clients, limit>>20)
		}
	})
}

// A client that pipelines GETs of a 1MB value and never reads its replies must be stopped by
// backpressure (the server stops reading it) instead of having gigabytes of replies buffered,
// and other clients keep being served meanwhile.
func TestBackpressureSlowReader(t *testing.T) {
	forEachEngine(t, func(t *testing.T) {
		hotkv, _ := startHotKV(t)
		const limit = 256 << 20
		setup := dial(t, hotkv)
		if got := setup.do("SET", "big", strings.Repeat("x", 1<<20)); got != "+OK\r\n" {
			t.Fatalf("SET big = %s", quote(got))
		}
		w := watchHeap()
		hog := dial(t, hotkv)
		hogDone := make(chan struct{})
		go func() {
			defer close(hogDone)
			// 600 GETs: 600MB of replies if nothing pushes back (more could take the machine down).
			chunk := []byte(strings.Repeat("*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n", 100))
			for i := 0; i < 6; i++ {
				if hog.c.SetWriteDeadline(time.Now().Add(3*time.Second)) != nil {
					return
				}
				if _, err := hog.c.Write(chunk); err != nil {
					return // blocked: the server stopped reading this client
				}
			}
		}()
		other := dial(t, hotkv)
		deadline := time.Now().Add(3 * time.Second)
		for i := 0; time.Now().Before(deadline); i++ {
			start := time.Now()
			if got := other.do("INCR", "served"); got != ":"+strconv.Itoa(i+1)+"\r\n" {
				t.Fatalf("INCR from another client while one hogs = %s", quote(got))
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("another client waited %v for INCR while one client hogged the server", d)
			}
			time.Sleep(20 * time.Millisecond)
		}
		<-hogDone
		w.settle(limit, 2*time.Second, 30*time.Second)
		if g := w.growth(); g > limit {
			t.Errorf("heap grew by %d MB for a client that does not read 1MB replies; want < %d MB",
				g>>20, limit>>20)
		}
		hog.c.Close()
		if got := other.do("PING"); got != "+PONG\r\n" {
			t.Errorf("PING after the hog left = %s", quote(got))
		}
	})
}

// waitServerRead waits until the server has read every byte sent on conns, as the kernel sees
// it: no client socket holds unacknowledged bytes (tx_queue) and no server end of these
// connections holds unread ones (rx_queue), in Linux's /proc/net/tcp. HotKV's own figures for
// pending input cannot tell: CLIENT LIST reports qbuf=0 argv-mem=0 for a client parked in the
// middle of a command (Redis 7.0.15 shows qbuf=10 argv-mem=4 for the SET above, qbuf=0
// argv-mem=3 for the argument count), and INFO's client_recent_max_input_buffer and
// total_net_input_bytes are 0; the kernel's view also does not depend on the server under test.
// waitQueryBuffers waits until CLIENT LIST (asked on ctl) shows n clients holding a partial
// command (qbuf > 0).
func waitQueryBuffers(t *testing.T, ctl *rawConn, n int, wait time.Duration) {
	t.Helper()
	held := 0
	for deadline := time.Now().Add(wait); ; time.Sleep(5 * time.Millisecond) {
		v, err := resptest.Parse([]byte(ctl.do("CLIENT", "LIST")))
		if err != nil {
			t.Fatal(err)
		}
		text, _ := v.Text()
		held = 0
		for _, line := range strings.Split(text, "\n") {
			for _, f := range strings.Fields(line) {
				if q, ok := strings.CutPrefix(f, "qbuf="); ok && q != "0" {
					held++
				}
			}
		}
		if held >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("CLIENT LIST shows %d clients holding a partial command after %v, want %d", held, wait, n)
		}
	}
}
