package wire

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// capture is a TCP proxy in front of one redis-server's bus port: it forwards both directions and keeps
// every whole frame it sees.
type capture struct {
	mu      sync.Mutex
	packets [][]byte
	ln      net.Listener
}

func (c *capture) serve(t *testing.T, target string) {
	for {
		in, err := c.ln.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", target)
		if err != nil {
			in.Close()
			continue
		}
		go c.pipe(in, out)
		go c.pipe(out, in)
	}
}

// has reports whether a packet of type ty was captured (its header's type field, bytes 12-13).
func (c *capture) has(ty Type) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.packets {
		if len(p) >= 14 && Type(uint16(p[12])<<8|uint16(p[13])) == ty {
			return true
		}
	}
	return false
}

func (c *capture) pipe(src, dst net.Conn) {
	defer src.Close()
	defer dst.Close()
	r := bufio.NewReaderSize(src, 1<<16)
	for {
		hdr, err := r.Peek(8)
		if err != nil {
			return
		}
		n, err := Frame(hdr)
		if err != nil {
			return
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(r, b); err != nil {
			return
		}
		c.mu.Lock()
		c.packets = append(c.packets, b)
		c.mu.Unlock()
		if _, err := dst.Write(b); err != nil {
			return
		}
	}
}

func redisCmd(t *testing.T, port int, args ...string) string {
	t.Helper()
	out, err := exec.Command("redis-cli", append([]string{"-p", fmt.Sprint(port)}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("redis-cli %v: %v %s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func waitFor(t *testing.T, d time.Duration, what string, ok func() bool) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if ok() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// TestDecodeRedisBus runs four redis-server 7.0.15 nodes (three masters, one replica) whose buses are
// reached only through capturing proxies (each announces its proxy's port as its bus port), drives
// MEET, gossip, slot claims, PUBLISH, SPUBLISH, a manual failover and a FAIL, then decodes every
// captured packet and checks it re-encodes to the same bytes. Ports 27451-27454 (buses +10000),
// proxies 27455-27458.
func TestDecodeRedisBus(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not on PATH")
	}
	const n = 4
	caps := make([]*capture, n)
	rp := freePairs(t, 27451, 27454, n) // the redis-servers (buses +10000)
	proxy := []int{27455, 27456, 27457, 27458}
	for i := range n {
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", proxy[i]))
		if err != nil {
			t.Fatal(err)
		}
		caps[i] = &capture{ln: ln}
		go caps[i].serve(t, fmt.Sprintf("127.0.0.1:%d", rp[i]+10000))
		defer ln.Close()
	}
	for i := range n {
		dir := t.TempDir()
		args := []string{"--port", fmt.Sprint(rp[i]), "--bind", "127.0.0.1", "--dir", dir,
			"--cluster-enabled", "yes", "--cluster-config-file", filepath.Join(dir, "nodes.conf"),
			"--cluster-node-timeout", "1000", "--cluster-announce-bus-port", fmt.Sprint(proxy[i]),
			"--save", "", "--appendonly", "no", "--enable-debug-command", "yes", "--logfile", filepath.Join(dir, "log")}
		if i == 1 {
			args = append(args, "--cluster-announce-hostname", "node-one.test")
		}
		cmd := exec.Command("redis-server", args...)
		cmd.Dir = dir
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { cmd.Process.Kill(); cmd.Wait() }()
	}
	for i := range n {
		waitFor(t, 10*time.Second, "redis-server start", func() bool {
			out, err := exec.Command("redis-cli", "-p", fmt.Sprint(rp[i]), "PING").Output()
			return err == nil && strings.TrimSpace(string(out)) == "PONG"
		})
	}
	redisCmd(t, rp[0], "CLUSTER", "ADDSLOTSRANGE", "0", "5460")
	redisCmd(t, rp[1], "CLUSTER", "ADDSLOTSRANGE", "5461", "10922")
	redisCmd(t, rp[2], "CLUSTER", "ADDSLOTSRANGE", "10923", "16383")
	for i := 1; i < n; i++ {
		redisCmd(t, rp[0], "CLUSTER", "MEET", "127.0.0.1", fmt.Sprint(rp[i]), fmt.Sprint(proxy[i]))
	}
	waitFor(t, 30*time.Second, "cluster_state:ok", func() bool {
		for i := range n {
			if !strings.Contains(redisCmd(t, rp[i], "CLUSTER", "INFO"), "cluster_state:ok") {
				return false
			}
		}
		return true
	})
	id0 := redisCmd(t, rp[0], "CLUSTER", "MYID")
	waitFor(t, 10*time.Second, "node 3 to know node 0", func() bool {
		return strings.Contains(redisCmd(t, rp[3], "CLUSTER", "NODES"), id0)
	})
	redisCmd(t, rp[3], "CLUSTER", "REPLICATE", id0)
	redisCmd(t, rp[0], "PUBLISH", "news", "hello world")
	waitFor(t, 20*time.Second, "replica in sync", func() bool {
		return strings.Contains(redisCmd(t, rp[3], "INFO", "replication"), "master_link_status:up")
	})
	redisCmd(t, rp[0], "SPUBLISH", "bar", "shard hello") // slot 5061: node 0 sends it to its replica
	redisCmd(t, rp[3], "CLUSTER", "FAILOVER")
	waitFor(t, 20*time.Second, "manual failover", func() bool {
		return strings.Contains(redisCmd(t, rp[3], "ROLE"), "master")
	})
	// Node 2 stops answering for longer than the node timeout: the others flag it PFAIL, then,
	// once a majority of masters reported it, FAIL. The wait is for the FAIL packet itself: a
	// "master,fail" in CLUSTER NODES also matched PFAIL's "master,fail?", which under load came
	// well before any FAIL was sent (CI: "no fail packet captured"). Node 2 sleeps 8 s, so the
	// PFAIL reports (valid for twice the node timeout) can gather on a loaded machine.
	go exec.Command("redis-cli", "-p", fmt.Sprint(rp[2]), "DEBUG", "SLEEP", "8").Run()
	waitFor(t, 30*time.Second, "a FAIL packet", func() bool {
		for _, c := range caps {
			if c.has(Fail) {
				return true
			}
		}
		return false
	})
	time.Sleep(200 * time.Millisecond)

	seen := map[Type]int{}
	hostnames := 0
	var m Msg
	for _, c := range caps {
		c.mu.Lock()
		for _, p := range c.packets {
			if err := Decode(p, &m); err != nil {
				t.Fatalf("decode of a %d-byte Redis packet: %v", len(p), err)
			}
			seen[m.Type]++
			if m.Hostname() == "node-one.test" {
				hostnames++
			}
			if out := Encode(nil, &m); !bytes.Equal(out, p) {
				t.Fatalf("%v packet re-encodes differently", m.Type)
			}
			if IsGossipType(m.Type) && m.Hostname() == "" && len(m.Exts) != 0 {
				t.Fatalf("unexpected extensions %+v", m.Exts)
			}
		}
		c.mu.Unlock()
	}
	t.Logf("decoded packets by type: %v, with hostname: %d", seen, hostnames)
	for _, ty := range []Type{Ping, Pong, Meet, Publish, PublishShard, FailoverAuthRequest, FailoverAuthAck, MFStart, Fail} {
		if seen[ty] == 0 {
			t.Errorf("no %v packet captured", ty)
		}
	}
	if hostnames == 0 {
		t.Errorf("no hostname extension captured from node 1")
	}
	if os.Getenv("HOTKV_BUS_DUMP") != "" {
		os.WriteFile(os.Getenv("HOTKV_BUS_DUMP"), bytes.Join(caps[0].packets, nil), 0o644)
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
