package server

// FAILOVER against redis-server 7.0.15: the same steps on a Redis primary and a HotKV primary
// give the same transcript (replies, master_failover_state, roles, the PSYNC … FAILOVER the
// demoted primary sends, replids after an abort), with a fake replica that never catches up and
// fakes the target; and a real primary/replica pair fails over and back for each mix of Redis
// and HotKV, with a partial resync each way. Ports 23100-23199 (foPort).

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

var foPortNext atomic.Int32

func foPort(t *testing.T) int { return portFrom(t, &foPortNext, 23100, 100) }

func foDo(c *redis.Client, args ...any) string {
	v, err := c.Do(context.Background(), args...).Result()
	if err != nil {
		return "ERR:" + err.Error()
	}
	return fmt.Sprint(v)
}

func foWait(t *testing.T, what string, within time.Duration, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(within); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("%s: not after %v", what, within)
		}
	}
}

// fakeReplica is a replica that syncs once, acknowledges offset 0 and then only reads; its
// listener plays the failover target: it answers the handshake and rejects the PSYNC.
type fakeReplica struct {
	port  int
	l     net.Listener
	psync chan []string
}

func startFakeReplica(t *testing.T, primary int) *fakeReplica {
	t.Helper()
	f := &fakeReplica{port: foPort(t), psync: make(chan []string, 4)}
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(f.port))
	if err != nil {
		t.Fatal(err)
	}
	f.l = l
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					cmd, err := readCommand(br)
					if err != nil || len(cmd) == 0 {
						return
					}
					switch strings.ToUpper(cmd[0]) {
					case "PING":
						io.WriteString(c, "+PONG\r\n")
					case "PSYNC":
						f.psync <- cmd
						io.WriteString(c, "-ERR fake target refuses\r\n")
					default:
						io.WriteString(c, "+OK\r\n")
					}
				}
			}()
		}
	}()
	c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(primary))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	br := bufio.NewReader(c)
	line := func() string {
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		s, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("fake replica: %v", err)
		}
		return strings.TrimRight(s, "\r\n")
	}
	send := func(args ...string) {
		fmt.Fprintf(c, "*%d\r\n", len(args))
		for _, a := range args {
			fmt.Fprintf(c, "$%d\r\n%s\r\n", len(a), a)
		}
	}
	send("REPLCONF", "listening-port", strconv.Itoa(f.port))
	if s := line(); s != "+OK" {
		t.Fatalf("fake replica: REPLCONF: %q", s)
	}
	send("PSYNC", "?", "-1")
	// The primary sends newlines while it prepares the RDB; bounded, so a sync that never
	// starts fails here rather than at the package timeout.
	const syncWait = 2 * time.Minute
	syncEnd := time.Now().Add(syncWait)
	keepalive := func() {
		if time.Now().After(syncEnd) {
			t.Fatalf("fake replica: only newlines for %v after PSYNC", syncWait)
		}
	}
	for {
		s := line()
		if s == "" {
			keepalive()
			continue
		}
		if !strings.HasPrefix(s, "+FULLRESYNC") {
			t.Fatalf("fake replica: PSYNC: %q", s)
		}
		break
	}
	var n int
	for {
		s := line()
		if s == "" {
			keepalive()
			continue
		}
		n, err = strconv.Atoi(strings.TrimPrefix(s, "$"))
		if err != nil {
			t.Fatalf("fake replica: bulk %q", s)
		}
		break
	}
	if _, err := io.CopyN(io.Discard, br, int64(n)); err != nil {
		t.Fatal(err)
	}
	send("REPLCONF", "ACK", "0")
	c.SetReadDeadline(time.Time{})
	go io.Copy(io.Discard, br)
	return f
}

// failoverSolo is the fake-replica transcript of one primary.
func failoverSolo(t *testing.T, hotkv bool) []string {
	port := foPort(t)
	p := startEither(t, hotkv, port)
	var out []string
	rec := func(s string, args ...any) { out = append(out, fmt.Sprintf(s, args...)) }
	for _, args := range [][]any{
		{"failover"}, {"failover", "abort"}, {"failover", "abort", "x"}, {"failover", "to"},
		{"failover", "to", "h"}, {"failover", "to", "h", "x"}, {"failover", "to", "h", "1"},
		{"failover", "timeout", "0"}, {"failover", "timeout", "x"}, {"failover", "timeout", "-1"},
		{"failover", "force"}, {"failover", "force", "force"}, {"failover", "to", "h", "1", "to", "h", "2"},
		{"failover", "timeout", "5", "timeout", "5"}, {"failover", "foo"}, {"failover", "TO", "h", "1", "FORCE", "TIMEOUT", "10"},
	} {
		rec("%v -> %s", args, foDo(p, args...))
	}
	f := startFakeReplica(t, port)
	foWait(t, "fake replica online", 10*time.Second, func() bool {
		return strings.Contains(replInfo(t, p, "replication", "slave0"), "state=online")
	})
	fp := strconv.Itoa(f.port)
	rec = func(s string, args ...any) {
		out = append(out, strings.ReplaceAll(fmt.Sprintf(s, args...), fp, "FAKEPORT"))
	}
	rec("set: %s", foDo(p, "set", "a", "1"))
	for _, args := range [][]any{
		{"failover", "to", "127.0.0.1", "1"}, {"failover", "to", "localhost", fp}, {"failover", "to", "127.0.0.1", fp, "force"},
		{"failover", "force", "timeout", "100"}, {"failover", "abort"},
		{"failover", "to", "127.0.0.1", fp}, {"failover"}, {"replicaof", "no", "one"}, {"replicaof", "127.0.0.1", "1"},
	} {
		rec("%v -> %s", args, foDo(p, args...))
	}
	rec("state %s role %s", replInfo(t, p, "replication", "master_failover_state"), replInfo(t, p, "replication", "role"))
	// A write waits while the failover holds writes, a read does not.
	held := make(chan string, 1)
	go func() { held <- foDo(p, "set", "b", "2") }()
	time.Sleep(300 * time.Millisecond)
	rec("get during pause: %s", foDo(p, "get", "a"))
	select {
	case r := <-held:
		rec("write not held: %s", r)
	default:
		rec("write held")
	}
	rec("client unpause: %s", foDo(p, "client", "unpause"))
	time.Sleep(100 * time.Millisecond)
	select {
	case r := <-held:
		rec("write released by CLIENT UNPAUSE: %s", r)
	default:
		rec("write still held")
	}
	rec("abort: %s", foDo(p, "failover", "abort"))
	rec("held write after abort: %s", <-held)
	rec("state %s", replInfo(t, p, "replication", "master_failover_state"))
	rec("abort again: %s", foDo(p, "failover", "abort"))

	// TIMEOUT without FORCE: the fake replica never acknowledges, so the failover aborts.
	rec("%s", foDo(p, "failover", "to", "127.0.0.1", fp, "timeout", "200"))
	rec("state %s", replInfo(t, p, "replication", "master_failover_state"))
	foWait(t, "timeout abort", 5*time.Second, func() bool {
		return replInfo(t, p, "replication", "master_failover_state") == "no-failover"
	})
	rec("after timeout: role %s", replInfo(t, p, "replication", "role"))

	// FORCE: at the timeout the primary becomes the target's replica and sends PSYNC … FAILOVER;
	// the fake target refuses, and the primary is a primary again with a new replid.
	oldID := replInfo(t, p, "replication", "master_replid")
	off, _ := strconv.ParseInt(replInfo(t, p, "replication", "master_repl_offset"), 10, 64)
	rec("%s", foDo(p, "failover", "to", "127.0.0.1", fp, "force", "timeout", "200"))
	select {
	case cmd := <-f.psync:
		rec("psync args %d: %s id-is-mine %v offset+1 %v %s", len(cmd), cmd[0], cmd[1] == oldID,
			cmd[2] == strconv.FormatInt(off+1, 10), strings.Join(cmd[3:], " "))
	case <-time.After(10 * time.Second):
		t.Fatal("no PSYNC reached the target")
	}
	foWait(t, "abort on refusal", 5*time.Second, func() bool {
		return replInfo(t, p, "replication", "master_failover_state") == "no-failover" &&
			replInfo(t, p, "replication", "role") == "master"
	})
	rec("after refusal: replid new %v replid2 old %v replicaof %q", replInfo(t, p, "replication", "master_replid") != oldID,
		replInfo(t, p, "replication", "master_replid2") == oldID, foDo(p, "config", "get", "replicaof"))
	rec("write after: %s", foDo(p, "set", "c", "3"))
	return out
}

func TestFailoverAgainstRedis(t *testing.T) {
	want := failoverSolo(t, false)
	got := failoverSolo(t, true)
	compareTranscripts(t, "FAILOVER (fake replica)", want, got)
}

func compareTranscripts(t *testing.T, what string, want, got []string) {
	t.Helper()
	for i := range max(len(want), len(got)) {
		var w, g string
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if w != g {
			t.Errorf("%s step %d:\n redis: %s\n hotkv: %s", what, i, w, g)
		}
	}
	if !t.Failed() {
		t.Logf("%s: %d steps equal:\n%s", what, len(want), strings.Join(want, "\n"))
	}
}

// failoverPair fails a primary over to its replica and back, recording what Redis shows.
func failoverPair(t *testing.T, hotkvPrimary, hotkvReplica bool) []string {
	pp, rpPort := foPort(t), foPort(t)
	p := startEither(t, hotkvPrimary, pp)
	r := startEither(t, hotkvReplica, rpPort)
	var out []string
	rec := func(s string, args ...any) { out = append(out, fmt.Sprintf(s, args...)) }
	ctx := context.Background()
	for i := range 200 {
		p.Set(ctx, "k"+strconv.Itoa(i), i, 0)
	}
	rec("replicaof: %s", foDo(r, "replicaof", "127.0.0.1", pp))
	waitInSync(t, p, r)
	// FAILOVER TO refuses a target the primary does not count online, which a Redis primary of a
	// diskless sync does only at an ACK after the transfer's end (the replica sends one a second).
	foWait(t, "replica online", 5*time.Second, func() bool {
		return strings.Contains(replInfo(t, p, "replication", "slave0"), "state=online")
	})
	rec("on replica: %s", foDo(r, "failover"))
	rec("not a replica: %s", foDo(p, "failover", "to", "127.0.0.1", pp))
	pid := replInfo(t, p, "replication", "master_replid")
	rOK := replInfo(t, r, "stats", "sync_partial_ok")
	pFull := replInfo(t, p, "stats", "sync_full")
	p.Set(ctx, "last", "1", 0)
	rec("failover: %s", foDo(p, "failover", "to", "127.0.0.1", rpPort, "timeout", "10000"))
	foWait(t, "swap", 15*time.Second, func() bool {
		return replInfo(t, p, "replication", "role") == "slave" && replInfo(t, r, "replication", "role") == "master" &&
			replInfo(t, p, "replication", "master_failover_state") == "no-failover" &&
			replInfo(t, p, "replication", "master_link_status") == "up"
	})
	waitInSync(t, r, p)
	rec("old primary: master_port ok %v replicaof ok %v write %s", replInfo(t, p, "replication", "master_port") == strconv.Itoa(rpPort),
		foDo(p, "config", "get", "replicaof") == fmt.Sprintf("[replicaof 127.0.0.1 %d]", rpPort), foDo(p, "set", "x", "1"))
	rec("new primary: replid2 is old %v replicaof %s last %s", replInfo(t, r, "replication", "master_replid2") == pid,
		foDo(r, "config", "get", "replicaof"), foDo(r, "get", "last"))
	rec("partial: old primary sync_partial_ok +%d on new, sync_full on new +0 %v", atoi(replInfo(t, r, "stats", "sync_partial_ok"))-atoi(rOK),
		replInfo(t, r, "stats", "sync_full") == "0")
	// And back, to any replica.
	r.Set(ctx, "last", "2", 0)
	rec("failover back: %s", foDo(r, "failover"))
	foWait(t, "swap back", 15*time.Second, func() bool {
		return replInfo(t, r, "replication", "role") == "slave" && replInfo(t, p, "replication", "role") == "master" &&
			replInfo(t, r, "replication", "master_failover_state") == "no-failover" &&
			replInfo(t, r, "replication", "master_link_status") == "up"
	})
	waitInSync(t, p, r)
	rec("back: last %s on replica %s, full syncs on primary +%d", foDo(p, "get", "last"), foDo(r, "get", "last"),
		atoi(replInfo(t, p, "stats", "sync_full"))-atoi(pFull))
	return out
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

func TestFailoverPairAgainstRedis(t *testing.T) {
	want := failoverPair(t, false, false)
	for _, c := range []struct{ p, r bool }{{true, true}, {true, false}, {false, true}} {
		t.Run(fmt.Sprintf("hotkv-primary=%v,hotkv-replica=%v", c.p, c.r), func(t *testing.T) {
			compareTranscripts(t, "FAILOVER pair", want, failoverPair(t, c.p, c.r))
		})
	}
}
