package link

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hotkv/hotkv/src/cluster"
	"github.com/hotkv/hotkv/src/cluster/wire"
)

func redisCli(t *testing.T, port int, args ...string) string {
	t.Helper()
	out, err := exec.Command("redis-cli", append([]string{"-p", fmt.Sprint(port)}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("redis-cli %v: %v %s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func waitFor(t *testing.T, d time.Duration, what string, ok func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for time.Since(start) < d {
		if ok() {
			return time.Since(start)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("timed out after %v waiting for %s", d, what)
	return 0
}

// nodeLine returns the CLUSTER NODES line of node name as redis-server on port sees it.
func nodeLine(t *testing.T, port int, name string) string {
	for _, l := range strings.Split(redisCli(t, port, "CLUSTER", "NODES"), "\n") {
		if strings.HasPrefix(l, name) {
			return l
		}
	}
	return ""
}

// TestBusWithRedis puts a HotKV bus node (this package's Bus over cluster.State; no data engine) on
// one bus with three redis-server 7.0.15 masters: it is met by Redis, learns every node and slot, its
// own slot claim spreads to Redis, Redis logs no warning about its packets, a killed Redis master is
// flagged FAIL by HotKV together with the other Redis masters, and Redis flags the HotKV node FAIL
// once its bus stops. Ports from 27460-27469 (buses +10000), cluster-node-timeout 3000.
func TestBusWithRedis(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not on PATH")
	}
	const nRedis = 3
	pp := freePairs(t, 27460, 27469, nRedis+1) // the Redis nodes, then HotKV's
	var procs []*exec.Cmd
	var logs []string
	for i := range nRedis {
		dir := t.TempDir()
		logs = append(logs, filepath.Join(dir, "log"))
		cmd := exec.Command("redis-server", "--port", fmt.Sprint(pp[i]), "--bind", "127.0.0.1", "--dir", dir,
			"--cluster-enabled", "yes", "--cluster-node-timeout", "3000", "--save", "", "--appendonly", "no",
			"--logfile", logs[i], "--loglevel", "verbose")
		cmd.Dir = dir
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs = append(procs, cmd)
	}
	defer func() {
		for _, p := range procs {
			p.Process.Kill()
			p.Wait()
		}
	}()
	for i := range nRedis {
		waitFor(t, 10*time.Second, "redis-server up", func() bool {
			out, err := exec.Command("redis-cli", "-p", fmt.Sprint(pp[i]), "PING").Output()
			return err == nil && strings.TrimSpace(string(out)) == "PONG"
		})
	}
	ranges := [][2]int{{0, 5460}, {5461, 10922}, {10923, 15999}}
	for i, r := range ranges {
		redisCli(t, pp[i], "CLUSTER", "SET-CONFIG-EPOCH", fmt.Sprint(i+1))
		redisCli(t, pp[i], "CLUSTER", "ADDSLOTSRANGE", fmt.Sprint(r[0]), fmt.Sprint(r[1]))
	}

	st := cluster.New("", cluster.Config{NodeTimeout: 3000, RequireFullCoverage: true})
	st.Myself.IP, st.Myself.Port, st.Myself.CPort = "127.0.0.1", pp[3], pp[3]+10000
	if err := st.SetConfigEpoch(4); err != nil {
		t.Fatal(err)
	}
	var slots []int
	for s := 16000; s < cluster.Slots; s++ {
		slots = append(slots, s)
	}
	if err := st.AddSlots(slots, time.Now().UnixMilli()); err != nil {
		t.Fatal(err)
	}
	bus, err := Start(fmt.Sprintf("127.0.0.1:%d", pp[3]+10000), st, cluster.Local{Port: pp[3], CPort: pp[3] + 10000})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			bus.Close()
		}
	}()
	me := st.Myself.Name
	for i := 1; i < nRedis; i++ {
		redisCli(t, pp[0], "CLUSTER", "MEET", "127.0.0.1", fmt.Sprint(pp[i]))
	}
	redisCli(t, pp[0], "CLUSTER", "MEET", "127.0.0.1", fmt.Sprint(pp[3]), fmt.Sprint(pp[3]+10000))

	names := make([]string, nRedis)
	for i := range nRedis {
		names[i] = redisCli(t, pp[i], "CLUSTER", "MYID")
	}
	took := waitFor(t, 30*time.Second, "one converged cluster", func() bool {
		for i := range nRedis {
			l := nodeLine(t, pp[i], me)
			if !strings.Contains(l, " master - ") || !strings.Contains(l, " connected 16000-16383") ||
				!strings.Contains(redisCli(t, pp[i], "CLUSTER", "INFO"), "cluster_state:ok") {
				return false
			}
		}
		ok := true
		bus.Do(func(st *cluster.State, now int64) []cluster.Out {
			for i, n := range names {
				k := st.Nodes[n]
				if k == nil || !k.IsMaster() || st.Owner[ranges[i][0]] != k || st.Owner[ranges[i][1]] != k {
					ok = false
				}
			}
			ok = ok && len(st.Nodes) == nRedis+1 && st.OK
			return nil
		})
		return ok
	})
	t.Logf("3 Redis + 1 HotKV bus node converged, cluster_state:ok everywhere, in %v", took)

	// kill -9 Redis master 2: HotKV and the two other Redis masters flag it FAIL (3 of 4 masters).
	procs[2].Process.Signal(syscall.SIGKILL)
	took = waitFor(t, 30*time.Second, "HotKV flags the killed Redis master FAIL", func() bool {
		failed := false
		bus.Do(func(st *cluster.State, now int64) []cluster.Out {
			failed = st.Nodes[names[2]].Failed() && !st.OK
			return nil
		})
		return failed && strings.Contains(nodeLine(t, pp[0], names[2]), "master,fail ")
	})
	t.Logf("killed Redis master flagged FAIL by HotKV and Redis %v after kill -9", took)

	// The HotKV bus stops: the two live Redis masters (2 of the 3 live... of 4 slot masters, one
	// already failed) cannot reach a majority of 3 reports, so they see it PFAIL ("fail?").
	bus.Close()
	closed = true
	took = waitFor(t, 30*time.Second, "Redis flags the HotKV node fail?", func() bool {
		l := nodeLine(t, pp[0], me)
		return strings.Contains(l, "master,fail? ") || strings.Contains(l, "master,fail ")
	})
	t.Logf("Redis flagged the stopped HotKV node %v later", took)

	for i := range 2 {
		b, _ := os.ReadFile(logs[i])
		for _, l := range strings.Split(string(b), "\n") {
			// cluster.c's warnings about bus input (packet length, padding, extensions, signature,
			// unknown types or extensions) and link errors.
			for _, w := range []string{"invalid", "Bad message", "nknown", "padding", "exceeds", "I/O error"} {
				if strings.Contains(l, w) {
					t.Errorf("redis %d logged: %s", i, l)
				}
			}
		}
	}
	if os.Getenv("HOTKV_BUS_LOG") != "" {
		b, _ := os.ReadFile(logs[0])
		t.Logf("redis 0 log:\n%s", b)
	}
}

// freePairs returns n ports of lo..hi whose port and bus port (+10000) can both be bound now: bus
// ports lie in the kernel's ephemeral range, where a connection's TIME_WAIT end may hold one.
func freePairs(t *testing.T, lo, hi, n int) []int {
	t.Helper()
	var out []int
	for p := lo; p <= hi && len(out) < n; p++ {
		free := true
		for _, q := range []int{p, p + 10000} {
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", q))
			if err != nil {
				free = false
				break
			}
			l.Close()
		}
		if free {
			out = append(out, p)
		}
	}
	if len(out) < n {
		t.Skipf("only %d free port pairs in %d-%d", len(out), lo, hi)
	}
	return out
}

// TestBusDropsMalformed: a stream that is not the bus is closed; a well-framed packet whose body
// is wrong for its type is dropped and the connection kept (a PING after it is answered); a frame
// announcing 1 GB that never comes allocates only what arrives. Port 37469 (no Redis needed).
func TestBusDropsMalformed(t *testing.T) {
	pp := freePairs(t, 27469, 27469, 1)
	st := cluster.New("", cluster.Config{NodeTimeout: 3000})
	bus, err := Start(fmt.Sprintf("127.0.0.1:%d", pp[0]+10000), st, cluster.Local{Port: pp[0], CPort: pp[0] + 10000})
	if err != nil {
		t.Fatal(err)
	}
	defer bus.Close()
	addr := bus.Addr().String()
	readPong := func(c net.Conn) error {
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		hdr := make([]byte, 8)
		if _, err := io.ReadFull(c, hdr); err != nil {
			return err
		}
		n, err := wire.Frame(hdr)
		if err != nil {
			return err
		}
		body := make([]byte, n-8)
		_, err = io.ReadFull(c, body)
		var m wire.Msg
		if err == nil {
			err = wire.Decode(append(hdr, body...), &m)
		}
		if err == nil && m.Type != wire.Pong {
			err = fmt.Errorf("got %v", m.Type)
		}
		return err
	}
	ping := &wire.Msg{Header: wire.Header{Type: wire.Ping}}
	copy(ping.Sender[:], cluster.RandomName())

	// Not the bus: closed.
	c1, _ := net.Dial("tcp", addr)
	c1.Write([]byte("*1\r\n$4\r\nPING\r\n"))
	c1.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c1.Read(make([]byte, 1)); err == nil {
		t.Fatalf("a non-bus stream was answered")
	}
	c1.Close()

	// A FAIL one byte short (totlen says so): dropped, then a PING on the same link is answered.
	c2, _ := net.Dial("tcp", addr)
	bad := wire.Encode(nil, &wire.Msg{Header: wire.Header{Type: wire.Fail}})
	bad = bad[:len(bad)-1]
	binary.BigEndian.PutUint32(bad[4:], uint32(len(bad)))
	c2.Write(bad)
	c2.Write(wire.Encode(nil, ping))
	if err := readPong(c2); err != nil {
		t.Fatalf("PING after a malformed FAIL: %v", err)
	}
	c2.Close()

	// A header announcing 1 GB, then 4 KB and a hang-up: the node stays up.
	c3, _ := net.Dial("tcp", addr)
	big := wire.Encode(nil, ping)
	binary.BigEndian.PutUint32(big[4:], 1<<30)
	c3.Write(append(big, make([]byte, 4096)...))
	c3.Close()
	c4, _ := net.Dial("tcp", addr)
	c4.Write(wire.Encode(nil, ping))
	if err := readPong(c4); err != nil {
		t.Fatalf("PING after a 1 GB frame was cut: %v", err)
	}
	c4.Close()
}
