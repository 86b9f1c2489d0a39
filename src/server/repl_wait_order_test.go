package server

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

// WAIT counts the writes sent before it on its connection, pipelined ones too: SET and WAIT 1
// in one write, then the replica must hold the key as soon as WAIT answers 1. WAIT is a
// connection command, and it was answered when routed, before the SET ahead of it had run on
// its shard: it acknowledged the write before, and a kill -9 of the primary right after lost
// the SET on the promoted replica (testfuzz TestClusterKillMaster: 1 of about 8,000 acked writes,
// in 2 of 3 runs). Here the replica is read right after each WAIT.
func TestWaitCoversPipelinedWrite(t *testing.T) {
	// The standard library's transport: netpoll's pollers share global state that the race
	// detector flags when a test's first servers start it (cloudwego/netpoll v0.7.2).
	t.Setenv("HOTKV_TRANSPORT", "std")
	pp, rp := foPort(t), foPort(t)
	_, p := startHotKVAt(t, pp)
	rs, r := startHotKVAt(t, rp)
	if got := foDo(r, "replicaof", "127.0.0.1", pp); got != "OK" {
		t.Fatalf("REPLICAOF: %s", got)
	}
	waitOffsetsEqual(t, p, r)
	c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", pp))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	acked, missing := 0, 0
	for i := range 300 {
		k := fmt.Sprintf("w%d", i)
		c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := fmt.Fprintf(c, "SET %s v\r\nWAIT 1 1000\r\n", k); err != nil {
			t.Fatal(err)
		}
		set, err1 := br.ReadString('\n')
		wait, err2 := br.ReadString('\n')
		if err1 != nil || err2 != nil || set != "+OK\r\n" {
			t.Fatalf("replies %q %q: %v %v", set, wait, err1, err2)
		}
		if strings.TrimSpace(wait) != ":1" {
			continue
		}
		acked++
		if got := foDo(r, "get", k); got != "v" {
			missing++
		}
	}
	if acked < 100 || missing > 0 {
		t.Fatalf("%d of 300 WAITs answered 1; %d of those writes were not on the replica when WAIT answered", acked, missing)
	}
	// A replica that cannot apply (every shard held): a pipelined SET is not acknowledged, so
	// WAIT 1 answers 0 at its timeout. Answered before the SET ran, it counted the replica's
	// acknowledgement of the write before and answered 1 at once.
	rs.Engine.Group.LockAll()
	held := true
	defer func() {
		if held {
			rs.Engine.Group.UnlockAll()
		}
	}()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := fmt.Fprintf(c, "SET held v\r\nWAIT 1 300\r\n"); err != nil {
		t.Fatal(err)
	}
	set, _ := br.ReadString('\n')
	wait, err := br.ReadString('\n')
	rs.Engine.Group.UnlockAll()
	held = false
	if err != nil || set != "+OK\r\n" || wait != ":0\r\n" {
		t.Fatalf("SET then WAIT 1 300 with the replica stalled: %q %q (%v), want +OK and :0", set, wait, err)
	}
}
