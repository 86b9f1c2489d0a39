package testfuzz

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// startClusterHotKV starts an in-process HotKV in cluster mode on port (bus port+10000), its
// nodes.conf under a temporary directory (an absolute path: dir would move the whole test process).
func startClusterHotKV(t *testing.T, port int) {
	t.Helper()
	conf := filepath.Join(t.TempDir(), "nodes.conf")
	startHotKV(t, "--port", fmt.Sprint(port), "--cluster-enabled", "yes", "--cluster-config-file", conf,
		"--cluster-node-timeout", "3000")
}

func cli(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("redis-cli", args...)
	out, err := cmd.CombinedOutput()
	return string(out), err
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
	out := mustCli(t, append(args, "--cluster-yes")...)
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
	cmd := exec.Command("redis-cli", "-c", "-p", fmt.Sprint(port))
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
// Redis's. Ports 27460-27462 (buses 37460-37462).
func TestClusterCreateHotKV(t *testing.T) {
	if !haveRedis() {
		t.Skip("redis-cli not on PATH")
	}
	ports := []int{27460, 27461, 27462}
	for _, p := range ports {
		startClusterHotKV(t, p)
	}
	took := createCluster(t, ports)
	t.Logf("3 HotKV masters: cluster_state:ok on all %v after --cluster create started", took)
	followKeys(t, ports[0], 100)
	// foo is slot 12182, the third node's: the first answers MOVED, the third serves it.
	if got := mustCli(t, "-p", "27460", "SET", "foo", "bar"); got != "MOVED 12182 127.0.0.1:27462" {
		t.Fatalf("SET foo on the first node: %q", got)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-p", "27462", "MSET", "a", "1", "b", "2"}, "CROSSSLOT Keys in request don't hash to the same slot"},
		{[]string{"-p", "27462", "MSET", "{t}a", "1", "{t}b", "2"}, "MOVED 15891 127.0.0.1:27462"},
		{[]string{"-p", "27462", "SELECT", "1"}, "ERR SELECT is not allowed in cluster mode"},
		{[]string{"-p", "27462", "SELECT", "0"}, "OK"},
		{[]string{"-p", "27462", "CLUSTER", "KEYSLOT", "{user1000}.following"}, "3443"},
		{[]string{"-p", "27462", "INFO", "cluster"}, "# Cluster\r\ncluster_enabled:1"},
	} {
		got := mustCli(t, c.args...)
		if c.want == "MOVED 15891 127.0.0.1:27462" { // {t} is slot 15891: served here
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
// through both kinds of node, and the Redis nodes log no warning about bus packets. HotKV ports
// 27463-27465, Redis 27466-27468 (buses +10000).
func TestClusterCreateMixed(t *testing.T) {
	if !haveRedis() {
		t.Skip("redis-server not on PATH")
	}
	var logs []string
	ports := []int{27463, 27466, 27464, 27467, 27465, 27468} // alternate: slots split across both kinds
	for _, p := range ports {
		if p < 27466 {
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
	followKeys(t, 27463, 100)
	followKeys(t, 27466, 100)
	// PUBLISH goes over the bus both ways: a subscriber on a Redis node gets a message published on
	// a HotKV node, and the reverse.
	for _, c := range [][2]int{{27463, 27466}, {27467, 27464}} {
		pub, sub := c[0], c[1]
		rc := dial(t, fmt.Sprintf("127.0.0.1:%d", sub))
		rc.write(appendCommand(nil, "SUBSCRIBE", "news"))
		if got := string(rc.reply()); !strings.Contains(got, "subscribe") {
			t.Fatalf("SUBSCRIBE on %d: %q", sub, got)
		}
		msg := fmt.Sprintf("hello from %d", pub)
		mustCli(t, "-p", fmt.Sprint(pub), "PUBLISH", "news", msg)
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
// read there after READONLY. Ports 27480-27485 (buses 37480-37485).
func TestClusterCreateReplicas(t *testing.T) {
	if !haveRedis() {
		t.Skip("redis-cli not on PATH")
	}
	ports := []int{27480, 27481, 27482, 27483, 27484, 27485}
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
}
