package testfuzz

// Cluster failover after a crash: HotKV nodes as child processes of the built hotkv binary, a
// master ended by SIGKILL (kill -9 by its PID), on ports 32200-32249 (bus ports 42200-42249).

import (
	"bufio"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hotkv/hotkv/net/resp/resptest"
	"github.com/hotkv/hotkv/src/cluster"
)

// killPortNext walks 32200-32249 across the tests of this file and cluster_migrate_test.go.
var killPortNext atomic.Int32

// killPorts returns n ports of 32200-32249 whose port and bus port (+10000) can both be bound now
// (the bus ports lie in the kernel's ephemeral range, where a TIME_WAIT end may hold one).
func killPorts(t *testing.T, n int) []int {
	t.Helper()
	return freePortPairs(t, n, 32200, 50, func() int { return int(killPortNext.Add(1) - 1) })
}

// clusterChild is a cluster node run as a child process; its directory (nodes.conf) outlives a
// kill, so start brings the same node back.
type clusterChild struct {
	t      *testing.T
	bin    string
	port   int
	dir    string
	extra  []string
	cmd    *exec.Cmd
	out    *lockedBuffer
	exited chan struct{}
}

// startClusterChild runs bin (the hotkv binary or redis-server) in cluster mode on port with the
// issue's settings (node timeout 3000 ms, diskless sync without delay, HotKV at threads 1) and ends
// it by PID when the test ends.
func startClusterChild(t *testing.T, bin string, port int, extra ...string) *clusterChild {
	t.Helper()
	c := &clusterChild{t: t, bin: bin, port: port, dir: t.TempDir(), extra: extra}
	c.start()
	t.Cleanup(c.kill)
	return c
}

func (c *clusterChild) start() {
	c.t.Helper()
	args := []string{"--port", strconv.Itoa(c.port), "--bind", "127.0.0.1", "--dir", c.dir,
		"--cluster-enabled", "yes", "--cluster-config-file", filepath.Join(c.dir, "nodes.conf"),
		"--cluster-node-timeout", "3000", "--repl-diskless-sync-delay", "0", "--save", "",
		"--appendonly", "no", "--logfile", ""}
	if filepath.Base(c.bin) != "redis-server" {
		args = append(args, "--threads", "1")
	}
	c.cmd = exec.Command(c.bin, append(args, c.extra...)...)
	c.out = &lockedBuffer{}
	c.cmd.Stdout, c.cmd.Stderr, c.cmd.Dir = c.out, c.out, c.dir
	c.exited = make(chan struct{})
	if err := c.cmd.Start(); err != nil {
		c.t.Fatalf("start %s: %v", c.bin, err)
	}
	go func(cmd *exec.Cmd, exited chan struct{}) { cmd.Wait(); close(exited) }(c.cmd, c.exited)
	if err := waitPong(c.addr(), 20*time.Second, c.exited); err != nil {
		c.t.Fatalf("%s on %d: %v\n%s", c.bin, c.port, err, tail(c.out.String(), 3000))
	}
}

func (c *clusterChild) addr() string { return fmt.Sprintf("127.0.0.1:%d", c.port) }

// kill sends SIGKILL to the child's PID (kill -9: no shutdown code runs) and waits for its exit.
func (c *clusterChild) kill() {
	select {
	case <-c.exited:
		return
	default:
	}
	syscall.Kill(c.cmd.Process.Pid, syscall.SIGKILL)
	<-c.exited
}

// clusterView is one node's CLUSTER NODES: each node's port, flags, master id and slot count.
type clusterView map[string]struct {
	port   int
	flags  string
	master string
	slots  int
}

func readClusterView(t *testing.T, port int) clusterView {
	t.Helper()
	v := clusterView{}
	for _, l := range strings.Split(mustCli(t, "-p", strconv.Itoa(port), "CLUSTER", "NODES"), "\n") {
		f := strings.Fields(l)
		if len(f) < 8 {
			continue
		}
		addr, _, _ := strings.Cut(f[1], "@")
		p, _ := strconv.Atoi(addr[strings.LastIndexByte(addr, ':')+1:])
		slots := 0
		for _, r := range f[8:] {
			if strings.HasPrefix(r, "[") {
				continue
			}
			lo, hi, found := strings.Cut(r, "-")
			a, _ := strconv.Atoi(lo)
			b := a
			if found {
				b, _ = strconv.Atoi(hi)
			}
			slots += b - a + 1
		}
		v[f[0]] = struct {
			port   int
			flags  string
			master string
			slots  int
		}{p, f[2], f[3], slots}
	}
	return v
}

// id returns the id of the node on port.
func (v clusterView) id(port int) string {
	for id, n := range v {
		if n.port == port {
			return id
		}
	}
	return ""
}

// killWriter writes SET key v then WAIT 1 1000 for each key in turn on one connection until the
// connection fails or stop is set; acked holds the keys WAIT said one replica had, okOnly those
// the master answered OK whose WAIT did not (0 or no answer).
type killWriter struct {
	acked, okOnly []string
	stop          atomic.Bool
	done          chan struct{}
}

func startKillWriter(t *testing.T, port int, tag string) *killWriter {
	w := &killWriter{done: make(chan struct{})}
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 5*time.Second)
	if err != nil {
		t.Fatalf("dial %d: %v", port, err)
	}
	go func() {
		defer close(w.done)
		defer c.Close()
		r := bufio.NewReader(c)
		for i := 0; !w.stop.Load(); i++ {
			k := fmt.Sprintf("kill:{%s}:%d", tag, i)
			c.SetDeadline(time.Now().Add(5 * time.Second))
			if _, err := c.Write(appendCommand(appendCommand(nil, "SET", k, "v"+k), "WAIT", "1", "1000")); err != nil {
				return
			}
			set, err := resptest.ReadRaw(r)
			if err != nil || string(set) != "+OK\r\n" {
				return
			}
			wait, err := resptest.ReadRaw(r)
			if err == nil && string(wait) != ":0\r\n" && strings.HasPrefix(string(wait), ":") {
				w.acked = append(w.acked, k)
			} else {
				w.okOnly = append(w.okOnly, k)
			}
			if err != nil {
				return
			}
		}
	}()
	return w
}

// tagIn returns a hash tag whose slot the node on port serves.
func tagIn(t *testing.T, port int) string {
	t.Helper()
	nodes := mustCli(t, "-p", strconv.Itoa(port), "CLUSTER", "NODES")
	for _, l := range strings.Split(nodes, "\n") {
		f := strings.Fields(l)
		if len(f) < 9 || !strings.Contains(f[2], "myself") {
			continue
		}
		for i := 0; i < 100000; i++ {
			tag := "t" + strconv.Itoa(i)
			slot := cluster.KeySlotString(tag)
			for _, r := range f[8:] {
				lo, hi, found := strings.Cut(r, "-")
				a, _ := strconv.Atoi(lo)
				b := a
				if found {
					b, _ = strconv.Atoi(hi)
				}
				if !strings.HasPrefix(r, "[") && slot >= a && slot <= b {
					return tag
				}
			}
		}
	}
	t.Fatalf("no slot served by %d:\n%s", port, nodes)
	return ""
}

// countMissing reads each key (its value is "v" + key) from port over one pipelined connection
// (after READONLY, so a replica answers too) and returns how many are missing or wrong.
func countMissing(t *testing.T, port int, keys []string) int {
	t.Helper()
	rc := dial(t, fmt.Sprintf("127.0.0.1:%d", port))
	defer rc.c.Close()
	rc.do("READONLY")
	missing := 0
	for i := 0; i < len(keys); i += 100 {
		var b []byte
		batch := keys[i:min(i+100, len(keys))]
		for _, k := range batch {
			b = appendCommand(b, "GET", k)
		}
		rc.write(b)
		for _, k := range batch {
			if got := string(rc.reply()); got != fmt.Sprintf("$%d\r\nv%s\r\n", len(k)+1, k) {
				if missing == 0 {
					t.Logf("first missing key on %d: %s = %q", port, k, got)
				}
				missing++
			}
		}
	}
	return missing
}

// TestClusterKillMaster: a 3+3 cluster of child processes (redis-cli --cluster create
// --cluster-replicas 1); a writer sends SET + WAIT 1 1000 to one master, which is killed with
// SIGKILL mid-stream. Its replica must be a master, and cluster_state:ok with the slots on it on
// every live node, in under 10 s; every write WAIT acknowledged must be on it; the killed node,
// restarted on its nodes.conf, must rejoin as a replica of the new master and sync. Three runs,
// each against a master not killed before; all-HotKV (the hotkv binary), then all redis-server
// 7.0.15 as the reference for the times. HOTKV_CLUSTER_LONG=1 as the other failover tests:
// HOTKV_CLUSTER_LONG=1 go test ./testfuzz -run TestClusterKillMaster -v
func TestClusterKillMaster(t *testing.T) {
	longChildCluster(t)
	bins := map[string]string{"HotKV": buildHotKV(t), "Redis": "redis-server"}
	for _, kind := range []string{"HotKV", "Redis"} {
		t.Run(kind, func(t *testing.T) { killRuns(t, bins[kind], 3) })
	}
}

// killRuns builds a 3+3 cluster of bin and runs killOne runs times.
func killRuns(t *testing.T, bin string, runs int) {
	ports := killPorts(t, 6)
	nodes := map[int]*clusterChild{}
	for _, p := range ports {
		nodes[p] = startClusterChild(t, bin, p)
	}
	took := createCluster(t, ports, "--cluster-replicas", "1")
	t.Logf("3+3 %s child processes: cluster_state:ok on all %v after --cluster create started", filepath.Base(bin), took)
	killed := map[int]bool{}
	var summary []string
	for run := 1; run <= runs; run++ {
		victim, heir := pickVictim(t, ports, killed)
		killed[victim] = true
		r := killOne(t, nodes, ports, victim, heir)
		summary = append(summary, fmt.Sprintf("run %d: master %d killed, replica %d promoted and cluster_state:ok everywhere after %v; "+
			"%d of %d WAIT-acked writes lost (%d OK-only writes, %d lost); rejoined as replica and synced %v after restart",
			run, victim, heir, r.promote.Round(time.Millisecond), r.lost, len(r.acked), r.okOnly, r.okLost, r.rejoin.Round(time.Millisecond)))
		t.Log(summary[len(summary)-1])
	}
	t.Logf("summary:\n%s", strings.Join(summary, "\n"))
}

// pickVictim waits until three replicas have their link to their master up, then returns a
// master not in killed and its replica.
func pickVictim(t *testing.T, ports []int, killed map[int]bool) (victim, heir int) {
	t.Helper()
	for end := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		v := readClusterView(t, ports[0])
		up := 0
		victim, heir = 0, 0
		for _, n := range v {
			if !strings.Contains(n.flags, "slave") || strings.Contains(n.flags, "fail") {
				continue
			}
			if !strings.Contains(mustCli(t, "-p", strconv.Itoa(n.port), "INFO", "replication"), "master_link_status:up") {
				continue
			}
			up++
			if m := v[n.master]; victim == 0 && !killed[m.port] && m.slots > 0 {
				victim, heir = m.port, n.port
			}
		}
		if up == 3 && victim != 0 {
			return victim, heir
		}
		if time.Now().After(end) {
			t.Fatalf("no master with a synced replica left to kill (killed %v):\n%s", killed,
				mustCli(t, "-p", strconv.Itoa(ports[0]), "CLUSTER", "NODES"))
		}
	}
}

type killResult struct {
	promote, rejoin time.Duration
	acked           []string
	lost            int
	okOnly, okLost  int
}

// killOne runs one kill -9 of victim with writes under way, the wait for heir's promotion, the
// count of lost writes and the restart of victim as heir's replica.
func killOne(t *testing.T, nodes map[int]*clusterChild, ports []int, victim, heir int) killResult {
	t.Helper()
	w := startKillWriter(t, victim, tagIn(t, victim))
	time.Sleep(time.Second)
	start := time.Now()
	nodes[victim].kill()
	w.stop.Store(true)
	<-w.done
	if len(w.acked) == 0 {
		t.Fatalf("no write to %d was acknowledged by WAIT before the kill", victim)
	}
	heirID := readClusterView(t, heir).id(heir)
	for {
		ok := strings.HasPrefix(mustCli(t, "-p", strconv.Itoa(heir), "ROLE"), "master")
		for _, p := range ports {
			if p == victim || !ok {
				continue
			}
			h := readClusterView(t, p)[heirID]
			ok = strings.Contains(h.flags, "master") && h.slots > 0 &&
				strings.Contains(mustCli(t, "-p", strconv.Itoa(p), "CLUSTER", "INFO"), "cluster_state:ok")
		}
		if ok {
			break
		}
		if time.Since(start) > 30*time.Second {
			t.Fatalf("no failover 30 s after kill -9 of %d:\n%s", victim, mustCli(t, "-p", strconv.Itoa(heir), "CLUSTER", "NODES"))
		}
		time.Sleep(50 * time.Millisecond)
	}
	r := killResult{promote: time.Since(start), acked: w.acked, okOnly: len(w.okOnly)}
	r.lost = countMissing(t, heir, w.acked)
	r.okLost = countMissing(t, heir, w.okOnly)
	if r.promote > 10*time.Second {
		t.Errorf("kill -9 of %d: promotion of %d took %v, want under 10 s", victim, heir, r.promote)
	}
	if r.lost > 0 {
		t.Errorf("kill -9 of %d: %d of %d writes WAIT acknowledged are missing on the promoted %d", victim, r.lost, len(w.acked), heir)
	}
	start = time.Now()
	nodes[victim].start()
	for {
		v := readClusterView(t, victim)
		me := v[v.id(victim)]
		if strings.Contains(me.flags, "slave") && me.master == heirID &&
			strings.Contains(mustCli(t, "-p", strconv.Itoa(victim), "INFO", "replication"), "master_link_status:up") {
			break
		}
		if time.Since(start) > 30*time.Second {
			t.Fatalf("restarted %d is not a synced replica of %d 30 s later:\n%s\n%s", victim, heir,
				mustCli(t, "-p", strconv.Itoa(victim), "CLUSTER", "NODES"), tail(nodes[victim].out.String(), 3000))
		}
		time.Sleep(50 * time.Millisecond)
	}
	r.rejoin = time.Since(start)
	if n := countMissing(t, victim, w.acked); n > 0 {
		t.Errorf("restarted %d, synced from %d: %d of %d acknowledged writes missing", victim, heir, n, len(w.acked))
	}
	return r
}

// longChildCluster skips a test of child-process cluster nodes unless HOTKV_CLUSTER_LONG=1,
// redis-server is installed and the test binary is built without -race (the children are not).
func longChildCluster(t *testing.T) {
	t.Helper()
	if !haveRedis() {
		t.Skip("redis-server not on PATH")
	}
	longCluster(t)
	if raceEnabled {
		t.Skip("-race: every node is a child process built without it")
	}
}
