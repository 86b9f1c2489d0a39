package transport

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"runtime"
	"testing"
	"time"
)

// script builds n random request lines and the replies lineHandler owes them.
func script(rng *rand.Rand, n int) (req, want []byte) {
	for i := range n {
		line := []byte("PING")
		if rng.IntN(3) > 0 {
			line = fmt.Appendf(nil, "line-%d-%s", i, bytes.Repeat([]byte{'x'}, rng.IntN(300)))
		}
		req = append(append(req, line...), "\r\n"...)
		want = appendReply(want, line)
	}
	return req, want
}

func TestEchoPipelined(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		for _, block := range []bool{false, true} {
			h := &lineHandler{block: block}
			s := startServer(t, Options{Engine: engine}, h)
			c := dial(t, s)
			req, want := script(rand.New(rand.NewPCG(1, 2)), 2000) // ~300KB: several reads and buffer growth
			go c.Write(req)
			if got := readN(t, c, len(want)); !bytes.Equal(got, want) {
				t.Fatalf("block=%v: replies differ (got %d bytes)", block, len(got))
			}
		}
	})
}

// sendPieces writes req in random pieces of 1..maxPiece bytes, pausing a millisecond after about
// one piece in pauseOneIn.
func sendPieces(c net.Conn, req []byte, rng *rand.Rand, maxPiece, pauseOneIn int) {
	for len(req) > 0 {
		n := min(1+rng.IntN(maxPiece), len(req))
		c.Write(req[:n])
		req = req[n:]
		if rng.IntN(pauseOneIn) == 0 {
			time.Sleep(time.Millisecond)
		}
	}
}

// TestFragmented sends the requests in random small pieces with pauses, so that reads end inside
// lines and inside "\r\n", for a handler that returns on partial input and one that blocks in Peek.
func TestFragmented(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		for _, block := range []bool{false, true} {
			h := &lineHandler{block: block}
			s := startServer(t, Options{Engine: engine}, h)
			c := dial(t, s)
			c.SetNoDelay(true)
			rng := rand.New(rand.NewPCG(3, 4))
			req, want := script(rng, 200)
			go sendPieces(c, req, rng, 9, 8)
			if got := readN(t, c, len(want)); !bytes.Equal(got, want) {
				t.Fatalf("block=%v: replies differ:\n got %q\nwant %q", block, got, want)
			}
		}
	})
}

// TestFill sends a large pipelined request in one write: netpoll reads it a node at a time, and Fill
// reads the rest of each partial line from the socket without waiting. Replies must come back whole
// and in order, with and without fragmented sending (where Fill often finds nothing).
func TestFill(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		h := &lineHandler{fill: true}
		s := startServer(t, Options{Engine: engine}, h)
		c := dial(t, s)
		req, want := script(rand.New(rand.NewPCG(5, 6)), 2000)
		go c.Write(req)
		if got := readN(t, c, len(want)); !bytes.Equal(got, want) {
			t.Fatalf("replies differ (got %d bytes)", len(got))
		}
		switch fills := h.fills.Load(); {
		case engine == "std" && fills != 0:
			t.Fatalf("std engine: Fill added bytes %d times; it never reads outside Peek", fills)
		case engine == "netpoll" && fills == 0:
			t.Fatal("netpoll: Fill never added bytes though the request arrived in one write")
		}

		c2 := dial(t, s)
		c2.SetNoDelay(true)
		rng := rand.New(rand.NewPCG(7, 8))
		req, want = script(rng, 300)
		go sendPieces(c2, req, rng, 700, 4)
		if got := readN(t, c2, len(want)); !bytes.Equal(got, want) {
			t.Fatalf("fragmented: replies differ:\n got %q\nwant %q", got, want)
		}
	})
}

// TestPeekSlicesStayValid keeps every slice Peek returned during one Serve and checks, after more
// bytes arrived and the buffer grew, that none of them changed before Release.
func TestPeekSlicesStayValid(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		total := 200_000
		errc := make(chan error, 1)
		h := &funcHandler{serve: func(c Conn) error {
			var kept [][]byte
			var copies [][]byte
			for n := 1; n <= total; n = min(n*3, total) {
				p, err := c.Peek(n)
				if err != nil {
					return err
				}
				kept, copies = append(kept, p), append(copies, bytes.Clone(p))
				if n == total {
					break
				}
			}
			for i := range kept {
				if !bytes.Equal(kept[i], copies[i]) {
					errc <- fmt.Errorf("slice %d (len %d) changed before Release", i, len(kept[i]))
					return nil
				}
			}
			errc <- nil
			c.Skip(total)
			return c.Release()
		}}
		s := startServer(t, Options{Engine: engine}, h)
		c := dial(t, s)
		data := make([]byte, total)
		for i := range data {
			data[i] = byte(i * 7)
		}
		go func() {
			for off := 0; off < total; off += 1000 {
				c.Write(data[off : off+1000])
				time.Sleep(50 * time.Microsecond)
			}
		}()
		select {
		case err := <-errc:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("handler never saw all bytes")
		}
	})
}

// TestNoBusyLoop leaves half a request on the conn and checks that Serve is not called again and the
// process burns no CPU while the rest is missing.
func TestNoBusyLoop(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		for _, block := range []bool{false, true} {
			h := &lineHandler{block: block}
			s := startServer(t, Options{Engine: engine}, h)
			c := dial(t, s)
			c.Write([]byte("PING\r\nPI"))
			readN(t, c, 7)
			eventually(t, "first Serve", func() bool { return h.serves.Load() >= 1 })
			serves, cpu0 := h.serves.Load(), cpuTime()
			time.Sleep(300 * time.Millisecond)
			if d := cpuTime() - cpu0; d > 100*time.Millisecond {
				t.Errorf("block=%v: %v of CPU in 300ms with half a request pending", block, d)
			}
			if n := h.serves.Load(); n != serves {
				t.Errorf("block=%v: Serve called %d more times without new bytes", block, n-serves)
			}
			c.Write([]byte("NG\r\n"))
			if got := readN(t, c, 7); string(got) != "+PONG\r\n" {
				t.Fatalf("block=%v: got %q", block, got)
			}
		}
	})
}

// TestLargePeekAllocatesOnArrival: a Peek for 512MB on a conn that sent 10 bytes must not reserve the
// declared size, and a real multi-megabyte Peek must return the right bytes.
func TestLargePeekAllocatesOnArrival(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		const big = 3 << 20
		type result struct {
			n   int
			err error
			sum int
		}
		res := make(chan result, 2)
		h := &funcHandler{serve: func(c Conn) error {
			p, err := c.Peek(big)
			if errors.Is(err, ErrOffload) {
				return err // served inline: called again where Peek may block
			}
			if err != nil {
				res <- result{err: err}
				return err
			}
			sum := 0
			for _, b := range p {
				sum += int(b)
			}
			res <- result{n: len(p), sum: sum}
			c.Skip(big)
			c.Release()
			_, err = c.Peek(512 << 20) // the second request "declares" 512MB and sends 10 bytes
			res <- result{err: err}
			return err
		}}
		s := startServer(t, Options{Engine: engine}, h)
		c := dial(t, s)
		data, want := make([]byte, big), 0
		for i := range data {
			data[i] = byte(i)
			want += int(data[i])
		}
		c.Write(data)
		if r := <-res; r.err != nil || r.n != big || r.sum != want {
			t.Fatalf("3MB Peek: n=%d err=%v sum ok=%v", r.n, r.err, r.sum == want)
		}
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		c.Write([]byte("0123456789"))
		time.Sleep(200 * time.Millisecond)
		runtime.ReadMemStats(&after)
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 32<<20 {
			t.Fatalf("Peek(512MB) with 10 bytes sent allocated %d bytes", grew)
		}
		c.Close()
		if r := <-res; !errors.Is(r.err, io.EOF) && !errors.Is(r.err, ErrClosed) {
			t.Fatalf("Peek after peer close: %v", r.err)
		}
	})
}

// TestHalfClose: like Redis, requests sent before the peer's FIN are answered, then the conn closes.
func TestHalfClose(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		for range 20 { // the FIN races with the handler's write; repeat to catch a lost reply
			h := &lineHandler{}
			s := startServer(t, Options{Engine: engine}, h)
			c := dial(t, s)
			c.Write([]byte("PING\r\nhello\r\n"))
			c.CloseWrite()
			c.SetReadDeadline(time.Now().Add(10 * time.Second))
			got, err := io.ReadAll(c)
			if err != nil || string(got) != "+PONG\r\n+hello\r\n" {
				t.Fatalf("got %q, %v", got, err)
			}
			eventually(t, "Closed", func() bool { return h.closes.Load() == 1 })
		}
	})
}

// TestOpenError: a reply written by a failing Open reaches the client before the close.
func TestOpenError(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		h := &lineHandler{onOpen: func(c Conn) error {
			c.Write([]byte("-ERR max number of clients reached\r\n"))
			return errors.New("full")
		}}
		s := startServer(t, Options{Engine: engine}, h)
		c := dial(t, s)
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		got, err := io.ReadAll(c)
		if err != nil || string(got) != "-ERR max number of clients reached\r\n" {
			t.Fatalf("got %q, %v", got, err)
		}
		eventually(t, "Closed", func() bool { return h.closes.Load() == 1 })
		if h.serves.Load() != 0 {
			t.Fatal("Serve called after Open failed")
		}
	})
}

// TestServeErrorCloses: an error from Serve closes the conn once.
func TestServeErrorCloses(t *testing.T) {
	forEngines(t, func(t *testing.T, engine string) {
		h := &lineHandler{onLine: func(c Conn, line []byte) error {
			if string(line) == "QUIT" {
				c.Write([]byte("+OK\r\n"))
				return errors.New("quit")
			}
			return nil
		}}
		s := startServer(t, Options{Engine: engine}, h)
		c := dial(t, s)
		c.Write([]byte("QUIT\r\n"))
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if got, _ := io.ReadAll(c); string(got) != "+OK\r\n" {
			t.Fatalf("got %q", got)
		}
		eventually(t, "Closed", func() bool { return h.closes.Load() == 1 })
	})
}

// funcHandler adapts a Serve function; Open and Closed are recorded.
type funcHandler struct {
	serve  func(Conn) error
	conns  chan Conn
	closes chan Conn
}

func (h *funcHandler) Open(c Conn) error {
	if h.conns != nil {
		h.conns <- c
	}
	return nil
}

func (h *funcHandler) Serve(c Conn) error { return h.serve(c) }

func (h *funcHandler) Closed(c Conn) {
	if h.closes != nil {
		h.closes <- c
	}
}
