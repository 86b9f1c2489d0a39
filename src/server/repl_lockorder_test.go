package server

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"
)

// A primary's first replica attaches the pump's feed reader, which needs every shard held; INFO
// reads the replication state (r.mu) as a barrier holding every shard. PSYNC once took r.mu and
// then waited for the shards, so an INFO in between waited for r.mu forever, and the server
// answered neither (redis-cli --cluster create --cluster-replicas 1 hung on it under -race, and
// the stuck connection kept Stop from ending the cluster bus). The lock order is the shards, then
// r.mu (repl.go). Here the test holds every shard, as INFO does, while a PSYNC arrives and waits
// for them, then asks for what INFO replication reads: it must answer, and the PSYNC must go on
// once the shards are let go.
func TestFirstReplicaWhileInfoHoldsShards(t *testing.T) {
	// The standard library's transport: netpoll's pollers share global state that the race
	// detector flags when a test's first servers start it (cloudwego/netpoll v0.7.2).
	t.Setenv("HOTKV_TRANSPORT", "std")
	s := startTestServer(t, "--bind", "127.0.0.1")
	g := s.Engine.Group
	g.LockAll()
	held := true
	defer func() {
		if held {
			g.UnlockAll()
		}
	}()
	c, err := net.Dial("tcp", s.Addrs()[0].String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("PSYNC ? -1\r\n")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // the PSYNC reaches the attach and waits for the shards
	done := make(chan []byte, 1)
	go func() { done <- (*replHooks)(&s.repl).Info(nil) }()
	select {
	case info := <-done:
		if !strings.Contains(string(info), "role:master") {
			t.Errorf("INFO replication: %q", info)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("INFO replication waited 5 s for the replication state while every shard was held: a PSYNC holds it and waits for the shards")
	}
	g.UnlockAll()
	held = false
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "+FULLRESYNC") {
		t.Fatalf("PSYNC after the shards were let go: %q, %v", line, err)
	}
}
