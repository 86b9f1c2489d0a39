package server

// Sentinel over HotKV (issue 23 item 7): three `redis-server --sentinel` monitor a HotKV primary
// with two replicas (two HotKV, or one HotKV and one redis-server); the primary is killed with
// SIGKILL; a replica is promoted (+switch-master) within 15 s, the other follows it, and the old
// primary, restarted, comes back as a replica of the new one. Every process is ended by its PID.
//
// It builds the hotkv binary and takes about 30 s, so it runs only with HOTKV_REPL_SENTINEL=1.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// hotkvBinary builds the server once per test binary run.
var hotkvBin string

func buildHotKV(t *testing.T) string {
	t.Helper()
	if hotkvBin != "" {
		return hotkvBin
	}
	out := filepath.Join(os.TempDir(), fmt.Sprintf("hotkv-repl-test-%d", os.Getpid()))
	cmd := exec.Command("go", "build", "-o", out, "github.com/hotkv/hotkv/src/cmd/hotkv")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	hotkvBin = out
	return out
}

// proc is a server process the test ends by PID.
type proc struct {
	cmd    *exec.Cmd
	exited chan struct{}
	log    string
}

func startProc(t *testing.T, name string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(name, args...)
	logf := filepath.Join(t.TempDir(), "out.log")
	f, err := os.Create(logf)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, exited: make(chan struct{}), log: logf}
	go func() { cmd.Wait(); f.Close(); close(p.exited) }()
	t.Cleanup(func() {
		p.stop(syscall.SIGTERM)
		if t.Failed() {
			b, _ := os.ReadFile(logf)
			t.Logf("%s %v:\n%s", name, args[:2], lastLines(string(b), 20))
		}
	})
	return p
}

func (p *proc) stop(sig syscall.Signal) {
	select {
	case <-p.exited:
		return
	default:
	}
	p.cmd.Process.Signal(sig)
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		p.cmd.Process.Kill()
		<-p.exited
	}
}

func startHotKVProc(t *testing.T, port int, args ...string) (*proc, *redis.Client) {
	t.Helper()
	all := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--threads", "1", "--save", "",
		"--repl-diskless-sync-delay", "0", "--dir", t.TempDir(), "--enable-debug-command", "yes"}, args...)
	p := startProc(t, buildHotKV(t), all...)
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port), Protocol: 2, MaxRetries: -1})
	t.Cleanup(func() { c.Close() })
	for end := time.Now().Add(10 * time.Second); c.Ping(context.Background()).Err() != nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("hotkv did not start")
		}
	}
	return p, c
}

func TestReplSentinelFailover(t *testing.T) {
	if os.Getenv("HOTKV_REPL_SENTINEL") != "1" {
		t.Skip("HOTKV_REPL_SENTINEL=1 runs the Sentinel failover tests (about 30 s each)")
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not on PATH")
	}
	for _, mixed := range []bool{false, true} {
		t.Run(fmt.Sprintf("redis-replica=%v", mixed), func(t *testing.T) { sentinelFailover(t, mixed) })
	}
}

func sentinelFailover(t *testing.T, mixed bool) {
	ctx := context.Background()
	p0port := replPort(t)
	p0, c0 := startHotKVProc(t, p0port)
	preload(t, c0, 1000)
	var replicas []*redis.Client
	_, c1 := startHotKVProc(t, replPort(t), "--replicaof", "127.0.0.1", strconv.Itoa(p0port))
	replicas = append(replicas, c1)
	if mixed {
		replicas = append(replicas, startRedisAt(t, replPort(t), "--replicaof", "127.0.0.1", strconv.Itoa(p0port)))
	} else {
		_, c2 := startHotKVProc(t, replPort(t), "--replicaof", "127.0.0.1", strconv.Itoa(p0port))
		replicas = append(replicas, c2)
	}
	for _, r := range replicas {
		waitInSync(t, c0, r)
	}
	// Three sentinels.
	var sentinels []*redis.Client
	var sentinelLogs []string
	for range 3 {
		port := replPort(t)
		dir := t.TempDir()
		conf := filepath.Join(dir, "sentinel.conf")
		os.WriteFile(conf, []byte(fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nlogfile \"%s/sentinel.log\"\n"+
			"sentinel monitor mymaster 127.0.0.1 %d 2\nsentinel down-after-milliseconds mymaster 1000\n"+
			"sentinel failover-timeout mymaster 10000\nsentinel parallel-syncs mymaster 2\n", port, dir, dir, p0port)), 0o644)
		startProc(t, "redis-server", conf, "--sentinel")
		sentinelLogs = append(sentinelLogs, dir+"/sentinel.log")
		s := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port), Protocol: 2})
		t.Cleanup(func() { s.Close() })
		sentinels = append(sentinels, s)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, l := range sentinelLogs {
				b, _ := os.ReadFile(l)
				t.Logf("%s:\n%s", l, lastLines(string(b), 25))
			}
		}
	})
	// Every sentinel sees both replicas and the other sentinels.
	for end := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		ready := 0
		for _, s := range sentinels {
			m, err := s.Do(ctx, "SENTINEL", "MASTER", "mymaster").Slice()
			if err != nil {
				continue
			}
			f := map[string]string{}
			for i := 0; i+1 < len(m); i += 2 {
				f[fmt.Sprint(m[i])] = fmt.Sprint(m[i+1])
			}
			if f["num-slaves"] == "2" && f["num-other-sentinels"] == "2" {
				ready++
			}
		}
		if ready == 3 {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("sentinels did not discover the replicas and each other in 20 s (%d ready)", ready)
		}
	}
	sub := sentinels[0].Subscribe(ctx, "+switch-master")
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	c0.Set(ctx, "before-failover", "1", 0)
	if n, _ := c0.Do(ctx, "WAIT", 2, 2000).Int(); n != 2 {
		t.Fatalf("WAIT 2 2000 = %d", n)
	}
	t0 := time.Now()
	p0.stop(syscall.SIGKILL)
	var newPort string
	select {
	case m := <-sub.Channel():
		// "mymaster <old-ip> <old-port> <new-ip> <new-port>"
		f := strings.Fields(m.Payload)
		if len(f) != 5 {
			t.Fatalf("+switch-master %q", m.Payload)
		}
		newPort = f[4]
	case <-time.After(15 * time.Second):
		t.Fatal("no +switch-master within 15 s of the kill")
	}
	t.Logf("+switch-master %v after the kill", time.Since(t0).Round(time.Millisecond))
	var promoted, other *redis.Client
	for _, r := range replicas {
		if strings.HasSuffix(r.Options().Addr, ":"+newPort) {
			promoted = r
		} else {
			other = r
		}
	}
	if promoted == nil {
		t.Fatalf("new primary port %s is none of the replicas", newPort)
	}
	if role := replInfo(t, promoted, "replication", "role"); role != "master" {
		t.Fatalf("promoted instance's role %s", role)
	}
	// The other replica follows the new primary.
	for end := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if replInfo(t, other, "replication", "master_port") == newPort && replInfo(t, other, "replication", "master_link_status") == "up" {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("the other replica follows port %s (link %s), not %s", replInfo(t, other, "replication", "master_port"),
				replInfo(t, other, "replication", "master_link_status"), newPort)
		}
	}
	promoted.Set(ctx, "after-failover", "1", 0)
	waitInSync(t, promoted, other)
	if v, _ := other.Get(ctx, "before-failover").Result(); v != "1" {
		t.Fatalf("acked write before the failover lost on the other replica: %q", v)
	}
	// The old primary returns, empty, and is turned into a replica of the new one.
	_, back := startHotKVProc(t, p0port)
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if replInfo(t, back, "replication", "role") == "slave" && replInfo(t, back, "replication", "master_port") == newPort &&
			replInfo(t, back, "replication", "master_link_status") == "up" {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("old primary did not return as a replica of port %s in 30 s: role %s", newPort, replInfo(t, back, "replication", "role"))
		}
	}
	waitInSync(t, promoted, back)
	if v, _ := back.Get(ctx, "after-failover").Result(); v != "1" {
		t.Fatalf("old primary after its return: GET after-failover = %q", v)
	}
}
