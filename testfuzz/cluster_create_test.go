package testfuzz

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hotkv/hotkv/src/server"
)

// longCluster skips the failover tests (15-40 s each) unless HOTKV_CLUSTER_LONG=1, to keep CI's
// default run short: HOTKV_CLUSTER_LONG=1 go test ./testfuzz -run TestClusterFailover -v
func longCluster(t *testing.T) {
	if os.Getenv("HOTKV_CLUSTER_LONG") == "" {
		t.Skip("failover test: set HOTKV_CLUSTER_LONG=1")
	}
}

// clusterPortNext walks the part of the cluster tests' port range the testfuzz cluster tests use (27470-27499,
// buses 37470-37499; src/cluster's tests use 27450-27469) across the tests.
var clusterPortNext = 0

// clusterPorts returns n ports of the range whose port and bus port (+10000) can both be bound
// now: the bus ports lie in the kernel's ephemeral range, where a connection's TIME_WAIT end may
// hold one for a minute.
func clusterPorts(t *testing.T, n int) []int {
	t.Helper()
	return freePortPairs(t, n, 27470, 30, func() int { clusterPortNext++; return clusterPortNext - 1 })
}

// freePortPairs returns n ports of base..base+span-1 whose port and port+10000 can both be bound
// now, taking candidates in turn from next (a counter the caller keeps across tests).
func freePortPairs(t *testing.T, n, base, span int, next func() int) []int {
	t.Helper()
	var out []int
	for tries := 0; len(out) < n && tries < span; tries++ {
		p := base + next()%span
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
		t.Fatalf("only %d free port pairs in %d-%d", len(out), base, base+span-1)
	}
	return out
}

// startClusterHotKV starts an in-process HotKV in cluster mode on port (bus port+10000), its
// nodes.conf under a temporary directory (an absolute path: dir would move the whole test process).
func startClusterHotKV(t *testing.T, port int) *server.Server {
	t.Helper()
	// Several in-process servers: netpoll's pollers share global state that the race detector flags
	// when more than one server starts (cloudwego/netpoll v0.7.2 poll_manager.go Run); the standard
	// library transport has none.
	t.Setenv("HOTKV_TRANSPORT", "std")
	// No --dir: it would move the whole process (os.Chdir, as Redis does) under the other tests'
	// relative paths. The full sync's temporary files are unique in the shared directory.
	conf := filepath.Join(t.TempDir(), "nodes.conf")
	_, s := startHotKV(t, "--port", fmt.Sprint(port), "--cluster-enabled", "yes", "--cluster-config-file", conf,
		"--cluster-node-timeout", "3000")
	return s
}

// cli runs redis-cli, killed after a minute: a node that stops answering fails the test with
// the command it did not answer instead of holding the package to its timeout.
func cli(t *testing.T, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "redis-cli", args...)
	if sb, err := exec.LookPath("stdbuf"); err == nil { // line-buffered: a kill keeps the lines so far
		cmd = exec.CommandContext(ctx, sb, append([]string{"-oL", "redis-cli"}, args...)...)
	}
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		err = fmt.Errorf("redis-cli %v: no answer in a minute: %w", args, ctx.Err())
		// The nodes run in this process: what has waited that long is where one stopped answering.
		t.Logf("goroutines of this process waiting a minute or more:\n%s", stuckGoroutines(64<<10))
	}
	return string(out), err
}

// stuckGoroutines is the stack of every goroutine of this process that has waited a minute or
// more (the runtime marks those "N minutes" in a dump) or is in the replication or cluster code
// or a command (where a node that stopped answering would be, waiting or not), up to max
// bytes; the whole dump goes to a file whose name it gives.
func stuckGoroutines(max int) string {
	buf := make([]byte, 16<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out strings.Builder
	if f, err := os.CreateTemp("", "hotkv-goroutines-*.txt"); err == nil {
		f.Write(buf)
		f.Close()
		fmt.Fprintf(&out, "(all goroutines in %s)\n", f.Name())
	}
	for _, g := range strings.Split(string(buf), "\n\n") {
		head, _, _ := strings.Cut(g, "\n")
		ours := strings.Contains(g, "hotkv/src/server.(*repl") || strings.Contains(g, "hotkv/src/server.(*masterLink") ||
			strings.Contains(g, "hotkv/src/command.(*Engine).call") || strings.Contains(g, "cluster/mode.(*Mode).Cluster")
		if (strings.Contains(head, " minutes]") || ours) && out.Len()+len(g) < max {
			out.WriteString(g)
			out.WriteString("\n\n")
		}
	}
	return out.String()
}

func mustCli(t *testing.T, args ...string) string {
	t.Helper()
	out, err := cli(t, args...)
	if err != nil {
		t.Fatalf("redis-cli %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(out)
}

// createCluster runs redis-cli --cluster create over ports (all masters) and waits until every node
// reports cluster_state:ok and --cluster check passes from each; it returns the time taken.
func createCluster(t *testing.T, ports []int, extra ...string) time.Duration {
	t.Helper()
	start := time.Now()
	args := append([]string{"--cluster", "create"}, extra...)
	for _, p := range ports {
		args = append(args, fmt.Sprintf("127.0.0.1:%d", p))
	}
	out, err := cli(t, append(args, "--cluster-yes")...)
	if err != nil {
		// What each node believes: redis-cli waits until every node's CLUSTER NODES agrees on
		// the masters' slots ("Waiting for the cluster to join").
		for _, p := range ports {
			nodes, _ := cli(t, "-p", fmt.Sprint(p), "CLUSTER", "NODES")
			t.Logf("CLUSTER NODES of %d:\n%s", p, nodes)
		}
		t.Fatalf("redis-cli %v: %v\n%s", args, err, out)
	}
	if !strings.Contains(out, "[OK] All 16384 slots covered.") {
		t.Fatalf("--cluster create:\n%s", out)
	}
	for {
		ok := true
		for _, p := range ports {
			info := mustCli(t, "-p", fmt.Sprint(p), "CLUSTER", "INFO")
			ok = ok && strings.Contains(info, "cluster_state:ok") &&
				strings.Contains(info, fmt.Sprintf("cluster_known_nodes:%d", len(ports)))
		}
		if ok {
			break
		}
		if time.Since(start) > 30*time.Second {
			t.Fatalf("not converged in 30 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	took := time.Since(start)
	for _, p := range ports {
		if out, err := cli(t, "--cluster", "check", fmt.Sprintf("127.0.0.1:%d", p)); err != nil {
			t.Fatalf("--cluster check from %d: %v\n%s", p, err, out)
		}
	}
	return took
}

// followKeys writes and reads n keys through redis-cli -c from the first node, which follows MOVED.
func followKeys(t *testing.T, port, n int) {
	t.Helper()
	var in bytes.Buffer
	for i := range n {
		fmt.Fprintf(&in, "SET key:%d v%d\nGET key:%d\n", i, i, i)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // redirects ping-ponging between two views never end
	defer cancel()
	cmd := exec.CommandContext(ctx, "redis-cli", "-c", "-p", fmt.Sprint(port))
	cmd.Stdin = &in
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("redis-cli -c: %v\n%s", err, out)
	}
	var lines []string
	redirects := 0
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if strings.HasPrefix(l, "-> Redirected to slot") {
			redirects++
			continue
		}
		lines = append(lines, l)
	}
	if redirects == 0 {
		t.Fatalf("redis-cli -c was never redirected")
	}
	if len(lines) != 2*n {
		t.Fatalf("redis-cli -c gave %d lines for %d commands:\n%s", len(lines), 2*n, out)
	}
	for i := range n {
		if lines[2*i] != "OK" || lines[2*i+1] != fmt.Sprintf("v%d", i) {
			t.Fatalf("key:%d: %q %q", i, lines[2*i], lines[2*i+1])
		}
	}
}

// TestClusterCreateHotKV: redis-cli --cluster create of 3 HotKV masters converges, --cluster check
// passes from every node, redis-cli -c follows MOVED for 200 keys, and the redirection texts are
// Redis's. Ports from 27470-27499 (clusterPorts).
func TestClusterCreateHotKV(t *testing.T) {
	if !haveRedis() {
		t.Skip("redis-cli not on PATH")
	}
	ports := clusterPorts(t, 3)
	for _, p := range ports {
		startClusterHotKV(t, p)
	}
	took := createCluster(t, ports)
	t.Logf("3 HotKV masters: cluster_state:ok on all %v after --cluster create started", took)
	followKeys(t, ports[0], 100)
	// foo is slot 12182, the third node's: the first answers MOVED, the third serves it.
	if got := mustCli(t, "-p", fmt.Sprint(ports[0]), "SET", "foo", "bar"); got != fmt.Sprintf("MOVED 12182 127.0.0.1:%d", ports[2]) {
		t.Fatalf("SET foo on the first node: %q", got)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"MSET", "a", "1", "b", "2"}, "CROSSSLOT Keys in request don't hash to the same slot"},
		{[]string{"MSET", "{t}a", "1", "{t}b", "2"}, "OK"}, // {t} is slot 15891: served here
		{[]string{"SELECT", "1"}, "ERR SELECT is not allowed in cluster mode"},
		{[]string{"SELECT", "0"}, "OK"},
		{[]string{"CLUSTER", "KEYSLOT", "{user1000}.following"}, "3443"},
		{[]string{"INFO", "cluster"}, "# Cluster\r\ncluster_enabled:1"},
	} {
		got := mustCli(t, append([]string{"-p", fmt.Sprint(ports[2])}, c.args...)...)
		if false {
			if got != "OK" {
				t.Fatalf("%v: %q", c.args, got)
			}
			continue
		}
		if strings.TrimSpace(got) != c.want {
			t.Fatalf("%v: %q, want %q", c.args, got, c.want)
		}
	}
}

// TestClusterCreateMixed: 3 HotKV and 3 redis-server 7.0.15 masters made one cluster by
// redis-cli --cluster create: converged, --cluster check passes from all six, redis-cli -c works
// through both kinds of node, PUBLISH crosses the bus both ways, and the Redis nodes log no warning
// about bus packets. Ports from 27470-27499 (clusterPorts).
func TestClusterCreateMixed(t *testing.T) {
	if !haveRedis() {
		t.Skip("redis-server not on PATH")
	}
	var logs []string
	ports := clusterPorts(t, 6) // HotKV on the even positions, Redis on the odd: slots split across both
	for i, p := range ports {
		if i%2 == 0 {
			startClusterHotKV(t, p)
			continue
		}
		dir := t.TempDir()
		logs = append(logs, filepath.Join(dir, "log"))
		cmd := exec.Command("redis-server", "--port", fmt.Sprint(p), "--bind", "127.0.0.1", "--dir", dir,
			"--cluster-enabled", "yes", "--cluster-node-timeout", "3000", "--save", "", "--appendonly", "no",
			"--logfile", logs[len(logs)-1], "--loglevel", "verbose")
		cmd.Dir = dir
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		for end := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			if out, err := cli(t, "-p", fmt.Sprint(p), "PING"); err == nil && strings.TrimSpace(out) == "PONG" {
				break
			} else if time.Now().After(end) {
				t.Fatalf("redis-server on %d did not start", p)
			}
		}
	}
	took := createCluster(t, ports)
	t.Logf("3 HotKV + 3 Redis masters: cluster_state:ok on all %v after --cluster create started", took)
	followKeys(t, ports[0], 100)
	followKeys(t, ports[1], 100)
	// PUBLISH goes over the bus both ways: a subscriber on a Redis node gets a message published on
	// a HotKV node, and the reverse.
	for i, c := range [][2]int{{ports[0], ports[1]}, {ports[3], ports[2]}} {
		pub, sub := c[0], c[1]
		// A channel per round: a late copy of the first round's message (the bus forwards it
		// node to node) must not reach the second round's subscriber first.
		channel := fmt.Sprintf("news%d", i)
		rc := dial(t, fmt.Sprintf("127.0.0.1:%d", sub))
		rc.write(appendCommand(nil, "SUBSCRIBE", channel))
		if got := string(rc.reply()); !strings.Contains(got, "subscribe") {
			t.Fatalf("SUBSCRIBE on %d: %q", sub, got)
		}
		msg := fmt.Sprintf("hello from %d", pub)
		mustCli(t, "-p", fmt.Sprint(pub), "PUBLISH", channel, msg)
		if got := string(rc.reply()); !strings.Contains(got, msg) {
			t.Fatalf("subscriber on %d got %q, want the message published on %d", sub, got, pub)
		}
	}
	for _, l := range logs {
		b, _ := os.ReadFile(l)
		for _, line := range strings.Split(string(b), "\n") {
			for _, w := range []string{"invalid", "Bad message", "nknown", "padding", "exceeds", "I/O error"} {
				if strings.Contains(line, w) {
					t.Errorf("%s: %s", l, line)
				}
			}
		}
	}
}

// TestClusterCreateReplicas: redis-cli --cluster create --cluster-replicas 1 of 6 HotKV nodes
// converges with 3 masters and 3 replicas, --cluster check passes everywhere, and keys written
// through redis-cli -c reach each master's replica (HotKV to HotKV PSYNC, src/server/repl*.go),
// read there after READONLY. Ports from 27470-27499 (clusterPorts).
func TestClusterCreateReplicas(t *testing.T) {
	if !haveRedis() {
		t.Skip("redis-cli not on PATH")
	}
	ports := clusterPorts(t, 6)
	for _, p := range ports {
		startClusterHotKV(t, p)
	}
	took := createCluster(t, ports, "--cluster-replicas", "1")
	t.Logf("3 HotKV masters + 3 HotKV replicas: cluster_state:ok on all %v after --cluster create started", took)
	followKeys(t, ports[0], 100)
	replicas := 0
	for _, p := range ports {
		role := mustCli(t, "-p", fmt.Sprint(p), "ROLE")
		if !strings.HasPrefix(role, "slave") {
			continue
		}
		replicas++
		// Any key of this replica's master's slots must arrive; ask CLUSTER NODES which those are.
		var master string
		for _, l := range strings.Split(mustCli(t, "-p", fmt.Sprint(p), "CLUSTER", "NODES"), "\n") {
			if f := strings.Fields(l); len(f) > 3 && strings.Contains(f[2], "myself") {
				master = f[3]
			}
		}
		found := false
		for end := time.Now().Add(20 * time.Second); !found && time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
			for i := range 100 {
				rc := dial(t, fmt.Sprintf("127.0.0.1:%d", p))
				rc.do("READONLY")
				if got := rc.do("GET", fmt.Sprintf("key:%d", i)); got == fmt.Sprintf("$%d\r\nv%d\r\n", len(fmt.Sprint(i))+1, i) {
					found = true
					rc.c.Close()
					break
				}
				rc.c.Close()
			}
		}
		if !found {
			t.Fatalf("replica %d (of %s): no key of its master readable after READONLY", p, master)
		}
	}
	if replicas != 3 {
		t.Fatalf("%d replicas, want 3", replicas)
	}
	// CLUSTER FAILOVER TAKEOVER on a replica: it becomes the master of its slots at once, and the
	// old master its replica; the cluster stays consistent.
	for _, p := range ports {
		if !strings.HasPrefix(mustCli(t, "-p", fmt.Sprint(p), "ROLE"), "slave") {
			continue
		}
		if got := mustCli(t, "-p", fmt.Sprint(p), "CLUSTER", "FAILOVER", "TAKEOVER"); got != "OK" {
			t.Fatalf("CLUSTER FAILOVER TAKEOVER: %q", got)
		}
		for end := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			if strings.HasPrefix(mustCli(t, "-p", fmt.Sprint(p), "ROLE"), "master") {
				if out, err := cli(t, "--cluster", "check", fmt.Sprintf("127.0.0.1:%d", p)); err == nil {
					break
				} else if time.Now().After(end) {
					t.Fatalf("--cluster check after TAKEOVER: %v\n%s", err, out)
				}
			} else if time.Now().After(end) {
				t.Fatalf("TAKEOVER: %d is not a master 15 s later", p)
			}
		}
		break
	}
}

// TestClusterFailoverHotKV: in a 3+3 HotKV cluster a master stops (its listeners and bus close, as a
// kill does to the process); its HotKV replica wins the election, every live node serves its slots
// there with cluster_state:ok, and the keys acknowledged before the stop are counted on the new
// master. Ports from 27470-27499 (clusterPorts).
func TestClusterFailoverHotKV(t *testing.T) {
	if !haveRedis() {
		t.Skip("redis-cli not on PATH")
	}
	longCluster(t)
	ports := clusterPorts(t, 6)
	srv := map[int]*server.Server{}
	for _, p := range ports {
		srv[p] = startClusterHotKV(t, p)
	}
	createCluster(t, ports, "--cluster-replicas", "1")
	followKeys(t, ports[0], 200)
	// The victim: the master of slot 0 (key "key:19"... any key: find via CLUSTER NODES).
	heir, victim, heirID := firstReplica(t, ports[0], 10*time.Second)
	// Acked writes to the victim's slots, then wait for the replica to have them (WAIT-less: poll).
	var acked []string
	for i := range 2000 {
		k := fmt.Sprintf("fo:%d", i)
		if out, err := cli(t, "-p", fmt.Sprint(victim), "SET", k, "v"); err == nil && strings.TrimSpace(out) == "OK" {
			acked = append(acked, k)
		}
		if len(acked) == 200 {
			break
		}
	}
	// WAIT: the replica acknowledged these writes (src/server's replication), so none may be lost.
	waited := mustCli(t, "-p", fmt.Sprint(victim), "WAIT", "1", "2000")
	start := time.Now()
	srv[victim].Stop()
	var live []int
	for _, p := range ports {
		if p != victim {
			live = append(live, p)
		}
	}
	for {
		ok := strings.HasPrefix(mustCli(t, "-p", fmt.Sprint(heir), "ROLE"), "master")
		for _, p := range live {
			ok = ok && strings.Contains(mustCli(t, "-p", fmt.Sprint(p), "CLUSTER", "INFO"), "cluster_state:ok")
		}
		if ok {
			break
		}
		if time.Since(start) > 30*time.Second {
			t.Fatalf("no failover 30 s after the master stopped:\n%s", mustCli(t, "-p", fmt.Sprint(heir), "CLUSTER", "NODES"))
		}
		time.Sleep(100 * time.Millisecond)
	}
	took := time.Since(start)
	lost := 0
	for _, k := range acked {
		if got := mustCli(t, "-p", fmt.Sprint(heir), "GET", k); got != "v" {
			if lost == 0 {
				t.Logf("first lost key %s on the new master: %q", k, got)
			}
			lost++
		}
	}
	t.Logf("HotKV master stopped: HotKV replica %s promoted, cluster_state:ok on the 5 live nodes %v later; WAIT 1 2000 said %s; %d of %d acked writes lost",
		heirID[:8], took, waited, lost, len(acked))
	if waited == "1" && lost > 0 {
		t.Errorf("%d writes the replica acknowledged (WAIT) are missing on it after the failover", lost)
	}
	if took > 10*time.Second {
		t.Errorf("promotion took %v, want under 10 s", took)
	}
}

// startClusterRedis starts a redis-server 7.0.15 cluster node on port and returns its process.
func startClusterRedis(t *testing.T, port int) *exec.Cmd {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("redis-server", "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--dir", dir,
		"--cluster-enabled", "yes", "--cluster-node-timeout", "3000", "--save", "", "--appendonly", "no",
		"--logfile", filepath.Join(dir, "log"), "--repl-diskless-sync-delay", "0")
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if out, err := cli(t, "-p", fmt.Sprint(port), "PING"); err == nil && strings.TrimSpace(out) == "PONG" {
			return cmd
		} else if time.Now().After(end) {
			t.Fatalf("redis-server on %d did not start", port)
		}
	}
}

// TestClusterFailoverMixed: masters of one kind with replicas of the other. Redis masters with
// HotKV replicas: kill -9 a Redis master, its HotKV replica must win the votes of the Redis
// masters; HotKV masters with Redis replicas: a HotKV master stops, its Redis replica must win the
// HotKV masters' votes. Each: promotion under 10 s, cluster_state:ok on the live nodes, acked
// (WAIT) writes counted on the new master.
func TestClusterFailoverMixed(t *testing.T) {
	if !haveRedis() {
		t.Skip("redis-server not on PATH")
	}
	longCluster(t)
	for _, redisMasters := range []bool{true, false} {
		name := "HotKVMastersRedisReplicas"
		if redisMasters {
			name = "RedisMastersHotKVReplicas"
		}
		t.Run(name, func(t *testing.T) {
			ports := clusterPorts(t, 6)
			stop := map[int]func(){}
			for i, p := range ports { // redis-cli makes the first three masters
				if (i < 3) == redisMasters {
					cmd := startClusterRedis(t, p)
					stop[p] = func() { cmd.Process.Signal(syscall.SIGKILL) }
				} else {
					s := startClusterHotKV(t, p)
					stop[p] = s.Stop
				}
			}
			createCluster(t, ports, "--cluster-replicas", "1")
			failoverOne(t, ports, stop)
		})
	}
}

// failoverOne stops the master of the first replica it finds, after acked writes to its slots, and
// waits for that replica's promotion.
func failoverOne(t *testing.T, ports []int, stop map[int]func()) {
	t.Helper()
	nodes := ""
	for end := time.Now().Add(15 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if nodes = mustCli(t, "-p", fmt.Sprint(ports[0]), "CLUSTER", "NODES"); strings.Count(nodes, " slave ") == 3 {
			break
		}
	}
	ids := map[string]int{}
	for _, l := range strings.Split(nodes, "\n") {
		f := strings.Fields(l)
		var p int
		fmt.Sscanf(f[1][strings.LastIndexByte(f[1][:strings.IndexByte(f[1], '@')], ':')+1:], "%d", &p)
		ids[f[0]] = p
	}
	var victim, heir int
	for _, l := range strings.Split(nodes, "\n") {
		if f := strings.Fields(l); strings.Contains(f[2], "slave") {
			victim, heir = ids[f[3]], ids[f[0]]
			break
		}
	}
	if victim == 0 {
		t.Fatalf("no replica in\n%s", nodes)
	}
	// Let the replica finish its sync before writing.
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if strings.Contains(mustCli(t, "-p", fmt.Sprint(heir), "INFO", "replication"), "master_link_status:up") {
			break
		}
	}
	var acked []string
	for i := 0; i < 3000 && len(acked) < 200; i++ {
		k := fmt.Sprintf("fo:%d", i)
		if out, err := cli(t, "-p", fmt.Sprint(victim), "SET", k, "v"); err == nil && strings.TrimSpace(out) == "OK" {
			acked = append(acked, k)
		}
	}
	waited := mustCli(t, "-p", fmt.Sprint(victim), "WAIT", "1", "2000")
	start := time.Now()
	stop[victim]()
	for {
		ok := strings.HasPrefix(mustCli(t, "-p", fmt.Sprint(heir), "ROLE"), "master")
		for _, p := range ports {
			if p != victim {
				ok = ok && strings.Contains(mustCli(t, "-p", fmt.Sprint(p), "CLUSTER", "INFO"), "cluster_state:ok")
			}
		}
		if ok {
			break
		}
		if time.Since(start) > 30*time.Second {
			t.Fatalf("no failover 30 s after the master stopped:\n%s", mustCli(t, "-p", fmt.Sprint(heir), "CLUSTER", "NODES"))
		}
		time.Sleep(100 * time.Millisecond)
	}
	took := time.Since(start)
	lost := 0
	for _, k := range acked {
		if got := mustCli(t, "-p", fmt.Sprint(heir), "GET", k); got != "v" {
			lost++
		}
	}
	t.Logf("master on %d stopped: replica on %d promoted, cluster_state:ok on the live nodes %v later; WAIT 1 2000 said %s; %d of %d acked writes lost",
		victim, heir, took, waited, lost, len(acked))
	if took > 10*time.Second {
		t.Errorf("promotion took %v, want under 10 s", took)
	}
	if waited == "1" && lost > 0 {
		t.Errorf("%d writes the replica acknowledged (WAIT) are missing on it after the failover", lost)
	}
}

// firstReplica waits up to wait for port's CLUSTER NODES to list three replicas, then returns the
// first replica's port, its master's port and the replica's node id.
func firstReplica(t *testing.T, port int, wait time.Duration) (replica, master int, replicaID string) {
	t.Helper()
	nodes := ""
	for end := time.Now().Add(wait); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if nodes = mustCli(t, "-p", fmt.Sprint(port), "CLUSTER", "NODES"); strings.Count(nodes, " slave ") == 3 {
			break
		}
	}
	ids := map[string]int{}
	for _, l := range strings.Split(nodes, "\n") {
		f := strings.Fields(l)
		var p int
		fmt.Sscanf(f[1][strings.LastIndexByte(f[1][:strings.IndexByte(f[1], '@')], ':')+1:], "%d", &p)
		ids[f[0]] = p
	}
	for _, l := range strings.Split(nodes, "\n") {
		if f := strings.Fields(l); strings.Contains(f[2], "slave") {
			return ids[f[0]], ids[f[3]], f[0]
		}
	}
	t.Fatalf("no replica in\n%s", nodes)
	return 0, 0, ""
}
