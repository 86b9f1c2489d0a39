package server

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// forEachTransport runs f once per transport engine (HOTKV_TRANSPORT is read by Listen).
func forEachTransport(t *testing.T, f func(t *testing.T)) {
	for _, eng := range []string{"netpoll", "std"} {
		t.Run(eng, func(t *testing.T) {
			t.Setenv("HOTKV_TRANSPORT", eng)
			f(t)
		})
	}
}

// heapNow is the live heap after a collection: the server runs in this process.
func heapNow() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// hog writes n pipelined GETs of key on a new connection and never reads a reply. It returns the
// connection and a channel closed when the writing stopped (all written, or the write blocked
// for 2 s: the server stopped reading, or closed the connection).
func hog(t *testing.T, s *Server, key string, n int) (net.Conn, <-chan int64) {
	t.Helper()
	conn, err := net.Dial("tcp", s.Addrs()[0].String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	cmd := fmt.Sprintf("*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n", len(key), key)
	chunk := []byte(strings.Repeat(cmd, 10_000))
	done := make(chan int64, 1)
	go func() {
		var sent int64
		defer func() { done <- sent }()
		for i := 0; i < n/10_000; i++ {
			conn.SetWriteDeadline(time.Now().Add(2 * time.Second))
			m, err := conn.Write(chunk)
			sent += int64(m)
			if err != nil {
				return
			}
		}
	}()
	return conn, done
}

// probeLatency sends GETs of key one at a time on a new connection for d and returns the sorted
// round-trip times.
func probeLatency(t *testing.T, s *Server, key string, d time.Duration) []time.Duration {
	t.Helper()
	c := dialTestServer(t, s)
	var lat []time.Duration
	for end := time.Now().Add(d); time.Now().Before(end); {
		start := time.Now()
		c.send("GET " + key)
		l := c.line()
		if !strings.HasPrefix(l, "$") {
			t.Fatalf("GET from another client: %q", l)
		}
		if l != "$-1\r\n" {
			c.line()
		}
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	return lat
}

func pct(lat []time.Duration, p float64) time.Duration {
	if len(lat) == 0 {
		return 0
	}
	return lat[min(len(lat)-1, int(float64(len(lat))*p))]
}

// clientCount reads connected_clients from INFO clients.
func clientCount(t *testing.T, c *testClient) int {
	t.Helper()
	info := infoSection(t, c, "clients")
	var n int
	fmt.Sscanf(info["connected_clients"], "%d", &n)
	return n
}

// infoSection returns one INFO section's fields.
func infoSection(t *testing.T, c *testClient, section string) map[string]string {
	t.Helper()
	c.send("INFO " + section)
	var size int
	fmt.Sscanf(c.line(), "$%d", &size)
	buf := make([]byte, size+2)
	if _, err := ioReadFull(c.r, buf); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, l := range strings.Split(string(buf), "\r\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			out[k] = v
		}
	}
	return out
}

func ioReadFull(r *bufio.Reader, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := r.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// A client that pipelines 1,000,000 GETs of a 1 KB value and never reads holds a bounded amount
// of server memory: the server writes one batch of replies, blocks on the full socket and stops
// serving (std: and reading) that client, where Redis 7.0.15 buffers all 1 GB of replies under
// its default limits. Another client's GETs keep their usual latency meanwhile.
func TestNeverReadingPipeliner(t *testing.T) {
	forEachTransport(t, func(t *testing.T) {
		s := startTestServer(t)
		ctl := dialTestServer(t, s)
		if l := ctl.do("SET v " + strings.Repeat("x", 1024)); l != "+OK\r\n" {
			t.Fatal(l)
		}
		base := heapNow()
		var peak atomic.Int64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				if h := heapNow() - base; h > peak.Load() {
					peak.Store(h)
				}
				select {
				case <-stop:
					return
				case <-time.After(100 * time.Millisecond):
				}
			}
		}()
		_, done := hog(t, s, "v", 1_000_000)
		lat := probeLatency(t, s, "v", 3*time.Second)
		sent := <-done
		close(stop)
		wg.Wait()
		t.Logf("hog sent %d MB of GETs before blocking; heap growth peak %d MB; other client: %d GETs, p50 %v p99 %v max %v",
			sent>>20, peak.Load()>>20, len(lat), pct(lat, 0.5), pct(lat, 0.99), lat[len(lat)-1])
		// 1 GB of replies if nothing pushed back; a batch is about 4 MB, and under netpoll the
		// input the hog sent (23 MB) is stashed beside its blocked worker.
		if g := peak.Load(); g > 96<<20 {
			t.Errorf("heap grew by %d MB for a client that never reads; want < 96 MB", g>>20)
		}
		if p := pct(lat, 0.99); p > 100*time.Millisecond && !raceBuild { // -race: 4 ms-0.5 s on this VM
			t.Errorf("another client's GET p99 %v while one client never reads; want < 100ms", p)
		}
		if l := ctl.do("PING"); l != "+PONG\r\n" {
			t.Errorf("PING: %q", l)
		}
	})
}

// With a normal-class client-output-buffer-limit, the never-reading pipeliner is closed (hard
// limit at once, soft after its seconds) with Redis's log line, as Redis does. The limits are
// below what backpressure leaves pending for it (about one input read's replies that the kernel
// did not take: 190 KB on std, 1 MB on netpoll here); above that a pipeliner is held, not closed.
func TestNormalOutputLimitDisconnects(t *testing.T) {
	for _, tc := range []struct{ name, limit string }{
		{"hard", "normal 100kb 0 0"},
		{"soft", "normal 0 50kb 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			forEachTransport(t, func(t *testing.T) {
				s := startTestServer(t)
				var logBuf syncBuffer
				old := slog.Default()
				slog.SetDefault(slog.New(slog.NewTextHandler(&logBuf, nil)))
				t.Cleanup(func() { slog.SetDefault(old) })
				ctl := dialTestServer(t, s)
				ctl.do("SET v " + strings.Repeat("x", 1024))
				if l := ctl.do("CONFIG SET client-output-buffer-limit \"" + tc.limit + "\""); l != "+OK\r\n" {
					t.Fatal(l)
				}
				start := time.Now()
				hog(t, s, "v", 1_000_000)
				if !waitUntil(5*time.Second, func() bool { return clientCount(t, ctl) == 2 }) {
					t.Fatal("the never-reading client did not connect")
				}
				if !waitUntil(10*time.Second, func() bool { return clientCount(t, ctl) == 1 }) {
					t.Fatalf("the never-reading client is still connected after 10 s under %q", tc.limit)
				}
				d := time.Since(start)
				if tc.name == "soft" && d < time.Second {
					t.Errorf("closed after %v, before the soft limit's 1 s", d)
				}
				if !strings.Contains(logBuf.String(), "scheduled to be closed ASAP for overcoming of output buffer limits.") {
					t.Errorf("no output buffer limit log line; log: %s", logBuf.String())
				}
				t.Logf("closed after %v", d)
			})
		})
	}
}

func waitUntil(d time.Duration, f func() bool) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if f() {
			return true
		}
	}
	return false
}

// timeout spares pub/sub subscribers and blocked clients, as Redis's clientsCronHandleTimeout.
func TestIdleTimeoutSparesSubscribersAndBlocked(t *testing.T) {
	s := startTestServer(t, "--timeout", "1")
	idle, sub, blocked := dialTestServer(t, s), dialTestServer(t, s), dialTestServer(t, s)
	idle.do("PING")
	sub.do("SUBSCRIBE ch")
	sub.line()
	sub.line()
	blocked.send("BLPOP nolist 0")
	time.Sleep(2500 * time.Millisecond)
	idle.conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := idle.r.ReadByte(); err == nil {
		t.Fatal("idle client got data")
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("idle client not closed after timeout 1")
	}
	pub := dialTestServer(t, s)
	if l := pub.do("PUBLISH ch hello"); l != ":1\r\n" {
		t.Fatalf("PUBLISH after 2.5 s: %q (subscriber timed out?)", l)
	}
	if l := pub.do("RPUSH nolist x"); l != ":1\r\n" {
		t.Fatal(l)
	}
	if l := blocked.line(); l != "*2\r\n" {
		t.Fatalf("blocked client after 2.5 s: %q (timed out?)", l)
	}
}

// maxmemory-clients closes the client using the most memory (the never-reading pipeliner's
// output) and spares a CLIENT NO-EVICT one.
func TestMaxMemoryClientsEvictsLargest(t *testing.T) {
	s := startTestServer(t)
	ctl := dialTestServer(t, s)
	ctl.do("SET v " + strings.Repeat("x", 1024))
	ctl.do("CLIENT NO-EVICT on")
	protected := dialTestServer(t, s)
	if l := protected.do("CLIENT NO-EVICT on"); l != "+OK\r\n" {
		t.Fatal(l)
	}
	hog(t, s, "v", 200_000)
	if !waitUntil(5*time.Second, func() bool { return s.Engine.ClientMemory() > 1<<20 }) {
		t.Fatalf("ClientMemory %d with a never-reading client", s.Engine.ClientMemory())
	}
	if l := ctl.do("CONFIG SET maxmemory-clients 1mb"); l != "+OK\r\n" {
		t.Fatal(l)
	}
	if !waitUntil(5*time.Second, func() bool { return clientCount(t, ctl) == 2 }) {
		t.Fatal("the largest client was not evicted")
	}
	if l := protected.do("PING"); l != "+PONG\r\n" {
		t.Fatalf("NO-EVICT client: %q", l)
	}
	if n := s.Engine.EvictedClients(); n != 1 {
		t.Errorf("evicted clients %d, want 1", n)
	}
}

// idleDialerEnv makes TestIdleDialerHelper, run as a child process, hold connections: the
// client ends must not count against this process's descriptors.
const idleDialerEnv = "HOTKV_IDLE_DIALER"

// TestIdleDialerHelper is the child of TestTenThousandIdleConnections: it opens N connections
// to ADDR, has every 100th say PING, prints "ready" (or the first failure) and holds them until
// its stdin closes.
func TestIdleDialerHelper(t *testing.T) {
	spec := os.Getenv(idleDialerEnv)
	if spec == "" {
		t.Skip("run by TestTenThousandIdleConnections")
	}
	var addr string
	var n int
	fmt.Sscanf(spec, "%s %d", &addr, &n)
	conns := make([]net.Conn, 0, n)
	fail := func(f string, a ...any) { fmt.Printf("failed: "+f+"\n", a...); os.Exit(0) }
	for range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			fail("dial %d: %v", len(conns), err)
		}
		conns = append(conns, c)
	}
	for i := 0; i < n; i += 100 {
		c := conns[i]
		c.SetDeadline(time.Now().Add(10 * time.Second))
		buf := make([]byte, 7)
		if _, err := c.Write([]byte("PING\r\n")); err != nil {
			fail("write %d: %v", i, err)
		}
		if _, err := ioReadFull(bufio.NewReader(c), buf); err != nil || string(buf) != "+PONG\r\n" {
			fail("idle connection %d: %q %v", i, buf, err)
		}
	}
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin)
}

// serverFDLimit is the open-file limit (soft raised to hard): the server's connections must fit.
func serverFDLimit(t *testing.T) uint64 {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Skipf("getrlimit: %v", err)
	}
	if lim.Cur < lim.Max {
		old := lim
		lim.Cur = lim.Max
		if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim) == nil {
			t.Cleanup(func() { syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old) })
		}
		syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim)
	}
	return lim.Cur
}

// 10,000 idle connections (held by a child process) are registered, each answers when it speaks,
// and another client's GETs keep their latency. Each idle connection holds one descriptor on
// either engine (netpoll's dup for blocking writes is made only when a worker writes); where
// the process may not open 10,000 and more, it is tested with as many as fit, and the test
// says so.
func TestTenThousandIdleConnections(t *testing.T) {
	limit := serverFDLimit(t)
	forEachTransport(t, func(t *testing.T) {
		perConn := uint64(1)
		n := 10_000
		if fit := int((limit - 300) / perConn); fit < n {
			t.Logf("RLIMIT_NOFILE %d fits %d connections at %d descriptors each: testing %d, not 10,000", limit, fit, perConn, fit)
			n = fit
		}
		s := startTestServer(t, "--maxclients", "10100")
		ctl := dialTestServer(t, s)
		base := heapNow()
		start := time.Now()
		child := exec.Command(os.Args[0], "-test.run=^TestIdleDialerHelper$")
		child.Env = append(os.Environ(), fmt.Sprintf("%s=%s %d", idleDialerEnv, s.Addrs()[0], n))
		stdin, _ := child.StdinPipe()
		out, _ := child.StdoutPipe()
		if err := child.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { stdin.Close(); child.Wait() })
		// Bounded: a dialer stuck in its dials (a full listen backlog retries SYNs for minutes)
		// must fail the test, not hold it until the package timeout. The pipe is an *os.File.
		const readyWait = 3 * time.Minute
		if f, ok := out.(*os.File); ok {
			f.SetReadDeadline(time.Now().Add(readyWait))
		}
		line, err := bufio.NewReader(out).ReadString('\n')
		if line != "ready\n" {
			child.Process.Kill() // so the cleanup's Wait returns
			t.Fatalf("the dialer: %q (%v; %v allowed)", line, err, readyWait)
		}
		if !waitUntil(20*time.Second, func() bool { return clientCount(t, ctl) == n+1 }) {
			t.Fatalf("connected_clients %d, want %d", clientCount(t, ctl), n+1)
		}
		dialed := time.Since(start)
		grown := heapNow() - base
		lat := probeLatency(t, s, "nokey", time.Second)
		t.Logf("%d idle connections: opened, pinged and registered in %v, heap +%d MB (%d bytes each); another client's GET p50 %v p99 %v",
			n, dialed, grown>>20, grown/int64(n), pct(lat, 0.5), pct(lat, 0.99))
		if p := pct(lat, 0.99); p > 50*time.Millisecond && !raceBuild {
			t.Errorf("GET p99 %v beside %d idle connections", p, n)
		}
	})
}

// Under netpoll the input a never-reading client keeps sending is stashed beside its blocked
// worker (the transport cannot stop polling the socket); client-query-buffer-limit bounds that
// stash as Redis bounds a query buffer: past it the client is closed. (The std engine stops
// reading the socket instead, so there the client is held, not closed.)
func TestQueryBufferLimitBoundsStash(t *testing.T) {
	t.Setenv("HOTKV_TRANSPORT", "netpoll")
	s := startTestServer(t, "--client-query-buffer-limit", "1mb")
	ctl := dialTestServer(t, s)
	ctl.do("SET v " + strings.Repeat("x", 1024))
	base := heapNow()
	accepted := sectionField(t, ctl, "stats", "total_connections_received")
	_, done := hog(t, s, "v", 1_000_000)
	// Connected: counted as accepted (it may already be closed again by the time a CLIENT LIST
	// looks: one CI run saw neither 2 clients nor a failure to connect).
	if !waitUntil(5*time.Second, func() bool { return sectionField(t, ctl, "stats", "total_connections_received") != accepted }) {
		t.Fatal("the never-reading client did not connect")
	}
	if !waitUntil(10*time.Second, func() bool { return clientCount(t, ctl) == 1 }) {
		t.Fatal("the never-reading client is still connected with 1 MB of client-query-buffer-limit")
	}
	sent := <-done
	g := heapNow() - base
	t.Logf("closed after sending %d MB; heap +%d MB", sent>>20, g>>20)
	if g > 16<<20 {
		t.Errorf("heap grew by %d MB with a 1 MB query buffer limit", g>>20)
	}
	if sent >= 23_000_000 {
		t.Errorf("the client sent all %d bytes: never closed while sending", sent)
	}
}
