package server

// Expiry on a primary under CLIENT PAUSE WRITE, against redis-server 7.0.15: while paused the
// dataset stays as it is (no active expiry, no reclaim on read, so no DEL reaches the replica
// and the replication offset does not move), keys past their time read as missing; once the
// pause ends the DELs go out. Ports 23400-23499 (pausePort).

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

var pausePortNext atomic.Int32

func pausePort(t *testing.T) int { return portFrom(t, &pausePortNext, 23400, 100) }

func pausedPrimaryExpiry(t *testing.T, hotkvPrimary, hotkvReplica bool) []string {
	pp, rp := pausePort(t), pausePort(t)
	p := startEither(t, hotkvPrimary, pp)
	r := startEither(t, hotkvReplica, rp)
	ctx := context.Background()
	var out []string
	rec := func(s string, args ...any) { out = append(out, fmt.Sprintf(s, args...)) }
	foDo(p, "config", "set", "repl-ping-replica-period", "3600") // no PING moves the offset
	rec("replicaof: %s", foDo(r, "replicaof", "127.0.0.1", pp))
	waitOffsetsEqual(t, p, r)
	expired := func() int {
		n, _ := strconv.Atoi(replInfo(t, p, "stats", "expired_keys"))
		return n
	}
	offset := func() int {
		n, _ := strconv.Atoi(replInfo(t, p, "replication", "master_repl_offset"))
		return n
	}
	exp0 := expired()
	// One round trip: the pause begins well before the 50 ms pass.
	cmds, err := p.Pipelined(ctx, func(pl redis.Pipeliner) error {
		pl.Set(ctx, "k1", "v", 50*time.Millisecond)
		pl.Set(ctx, "k2", "v", 50*time.Millisecond)
		pl.Set(ctx, "keep", "v", 0)
		pl.Do(ctx, "client", "pause", "2000", "write")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cmds {
		rec("%s", c.String())
	}
	waitOffsetsEqual(t, p, r)
	frozen := offset()
	time.Sleep(300 * time.Millisecond) // past the TTLs, several expiry cycles
	rec("paused: dbsize %s replica dbsize %s expired %d", foDo(p, "dbsize"), foDo(r, "dbsize"), expired()-exp0)
	rec("paused: get %s exists %s pttl %s type %s", foDo(p, "get", "k1"), foDo(p, "exists", "k2"),
		foDo(p, "pttl", "k1"), foDo(p, "type", "k2"))
	var seen []string
	for cur := uint64(0); ; {
		keys, next, err := p.Scan(ctx, cur, "*", 10).Result()
		if err != nil {
			t.Fatal(err)
		}
		if seen = append(seen, keys...); next == 0 {
			break
		}
		cur = next
	}
	rec("paused: keys %s scan %v randomkey %s", foDo(p, "keys", "*"), seen, foDo(p, "randomkey"))
	rec("paused: mget %s strlen %s", foDo(p, "mget", "k1", "k2", "keep"), foDo(p, "strlen", "k2"))
	time.Sleep(200 * time.Millisecond)
	rec("paused after reads: dbsize %s expired %d offset moved by %d", foDo(p, "dbsize"), expired()-exp0, offset()-frozen)
	rec("unpause: %s", foDo(p, "client", "unpause"))
	// The DELs come from the active expiry or from a read, whichever is first.
	foWait(t, "the DELs after the pause", 10*time.Second, func() bool { return foDo(p, "dbsize") == "1" })
	waitOffsetsEqual(t, p, r)
	rec("unpaused: dbsize %s replica dbsize %s expired %d offset moved by %d", foDo(p, "dbsize"), foDo(r, "dbsize"),
		expired()-exp0, offset()-frozen)
	return out
}

func TestPausedPrimaryExpiryAgainstRedis(t *testing.T) {
	want := pausedPrimaryExpiry(t, false, false)
	for _, c := range []struct{ p, r bool }{{true, false}, {true, true}} {
		t.Run(fmt.Sprintf("hotkv-primary=%v,hotkv-replica=%v", c.p, c.r), func(t *testing.T) {
			compareTranscripts(t, "paused primary expiry", want, pausedPrimaryExpiry(t, c.p, c.r))
		})
	}
}
