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
// captured packet and checks it re-encodes to the same bytes. Ports 27450-27453, buses 37450-37453,
// proxies 37460-37463 (or +10, +20, +30 when taken).
func TestDecodeRedisBus(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not on PATH")
	}
	const n = 4
	caps := make([]*capture, n)
	proxy := make([]int, n)
	for i := range n {
		// Ports above 32767 may be some connection's ephemeral end: try a few of the range.
		var ln net.Listener
		var err error
		for _, base := range []int{37460, 37470, 37480, 37490} {
			if ln, err = net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", base+i)); err == nil {
				proxy[i] = base + i
				break
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		caps[i] = &capture{ln: ln}
		go caps[i].serve(t, fmt.Sprintf("127.0.0.1:%d", 37450+i))
		defer ln.Close()
	}
	for i := range n {
		dir := t.TempDir()
		args := []string{"--port", fmt.Sprint(27450 + i), "--bind", "127.0.0.1", "--dir", dir,
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
			out, err := exec.Command("redis-cli", "-p", fmt.Sprint(27450+i), "PING").Output()
			return err == nil && strings.TrimSpace(string(out)) == "PONG"
		})
	}
	redisCmd(t, 27450, "CLUSTER", "ADDSLOTSRANGE", "0", "5460")
	redisCmd(t, 27451, "CLUSTER", "ADDSLOTSRANGE", "5461", "10922")
	redisCmd(t, 27452, "CLUSTER", "ADDSLOTSRANGE", "10923", "16383")
	for i := 1; i < n; i++ {
		redisCmd(t, 27450, "CLUSTER", "MEET", "127.0.0.1", fmt.Sprint(27450+i), fmt.Sprint(proxy[i]))
	}
	waitFor(t, 30*time.Second, "cluster_state:ok", func() bool {
		for i := range n {
			if !strings.Contains(redisCmd(t, 27450+i, "CLUSTER", "INFO"), "cluster_state:ok") {
				return false
			}
		}
		return true
	})
	id0 := redisCmd(t, 27450, "CLUSTER", "MYID")
	waitFor(t, 10*time.Second, "node 3 to know node 0", func() bool {
		return strings.Contains(redisCmd(t, 27453, "CLUSTER", "NODES"), id0)
	})
	redisCmd(t, 27453, "CLUSTER", "REPLICATE", id0)
	redisCmd(t, 27450, "PUBLISH", "news", "hello world")
	waitFor(t, 20*time.Second, "replica in sync", func() bool {
		return strings.Contains(redisCmd(t, 27453, "INFO", "replication"), "master_link_status:up")
	})
	redisCmd(t, 27450, "SPUBLISH", "bar", "shard hello") // slot 5061: node 0 sends it to its replica
	redisCmd(t, 27453, "CLUSTER", "FAILOVER")
	waitFor(t, 20*time.Second, "manual failover", func() bool {
		return strings.Contains(redisCmd(t, 27453, "ROLE"), "master")
	})
	// Node 2 stops answering for longer than the node timeout: the others flag it PFAIL, then FAIL.
	go exec.Command("redis-cli", "-p", "27452", "DEBUG", "SLEEP", "4").Run()
	waitFor(t, 20*time.Second, "node 2 marked fail", func() bool {
		return strings.Contains(redisCmd(t, 27450, "CLUSTER", "NODES"), "master,fail")
	})
	time.Sleep(500 * time.Millisecond)

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
