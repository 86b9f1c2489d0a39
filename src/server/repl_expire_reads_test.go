package server

// Reads of keys past their time on a replica, against redis-server 7.0.15, beside
// repl_expire_test.go: RANDOMKEY, DEBUG OBJECT, DEBUG DIGEST-VALUE and DEBUG DIGEST leave such
// keys for the primary's DEL, as a Redis replica does (DEBUG OBJECT and DEBUG DIGEST read the
// dict directly: a logically expired key is still described and digested), and so do TAG.*.
// Ports 23200-23299 (exPort).

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

var exPortNext atomic.Int32

func exPort(t *testing.T) int { return portFrom(t, &exPortNext, 23200, 100) }

func replicaExpiryReads(t *testing.T, hotkvPrimary, hotkvReplica bool) []string {
	pp, rp := exPort(t), exPort(t)
	p := startEither(t, hotkvPrimary, pp)
	r := startEither(t, hotkvReplica, rp)
	var out []string
	rec := func(s string, args ...any) { out = append(out, fmt.Sprintf(s, args...)) }
	rec("primary active expiry off: %s", foDo(p, "debug", "set-active-expire", "0"))
	foDo(p, "set", "live", "1")
	for i := range 5 {
		foDo(p, "set", "gone"+strconv.Itoa(i), "v", "px", "400")
	}
	foDo(p, "hset", "h", "f", "v")
	foDo(p, "pexpire", "h", "400")
	rec("replicaof: %s", foDo(r, "replicaof", "127.0.0.1", pp))
	waitOffsetsEqual(t, p, r)
	rec("digest while live %s", foDo(r, "debug", "digest"))
	time.Sleep(700 * time.Millisecond) // past the TTLs
	rec("dbsize %s", foDo(r, "dbsize"))
	seen := map[string]bool{}
	for range 30 {
		seen[foDo(r, "randomkey")] = true
	}
	var keys []string
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	rec("randomkey gave %v", keys)
	rec("dbsize after randomkey %s", foDo(r, "dbsize"))
	obj := foDo(r, "debug", "object", "gone0")
	rec("debug object of an expired key: is an error %v", strings.HasPrefix(obj, "ERR:"))
	rec("debug object of a missing key: %s", foDo(r, "debug", "object", "nosuch"))
	rec("dbsize after debug object %s", foDo(r, "dbsize"))
	rec("digest-value %s", foDo(r, "debug", "digest-value", "gone1", "h", "live"))
	rec("dbsize after digest-value %s", foDo(r, "dbsize"))
	rec("digest with expired keys held %s", foDo(r, "debug", "digest"))
	rec("dbsize after digest %s", foDo(r, "dbsize"))
	rec("primary's digest equal %v", foDo(p, "debug", "digest") == foDo(r, "debug", "digest"))
	rec("primary get %s", foDo(p, "get", "gone0")) // its DEL reaches the replica
	waitOffsetsEqual(t, p, r)
	rec("dbsize after the primary's DEL %s", foDo(r, "dbsize"))
	return out
}

func TestReplicaExpiryReadsAgainstRedis(t *testing.T) {
	want := replicaExpiryReads(t, false, false)
	for _, c := range []struct{ p, r bool }{{false, true}, {true, true}, {true, false}} {
		t.Run(fmt.Sprintf("hotkv-primary=%v,hotkv-replica=%v", c.p, c.r), func(t *testing.T) {
			compareTranscripts(t, "replica expiry reads", want, replicaExpiryReads(t, c.p, c.r))
		})
	}
}

// TestReplicaTagsLeaveExpiredKeys: TAG.GET, TAG.MEMBERS and TAG.COUNT on a HotKV replica skip a
// tagged key past its time without reclaiming it (DBSIZE keeps counting it until the primary's
// DEL), and the key's tags come back on the primary's side only through that DEL.
// replicaStep is a command sent to a replica (its words split on spaces) and the reply it must get.
type replicaStep struct{ cmd, want string }

func replicaSteps(t *testing.T, r *redis.Client, steps []replicaStep) {
	t.Helper()
	for _, s := range steps {
		var args []any
		for _, a := range strings.Fields(s.cmd) {
			args = append(args, a)
		}
		if got := foDo(r, args...); got != s.want {
			t.Errorf("replica %s: %s, want %s", s.cmd, got, s.want)
		}
	}
}

func TestReplicaTagsLeaveExpiredKeys(t *testing.T) {
	pp, rp := exPort(t), exPort(t)
	p := startEither(t, true, pp)
	r := startEither(t, true, rp)
	foDo(p, "debug", "set-active-expire", "0")
	foDo(p, "set", "live", "1")
	foDo(p, "set", "gone", "v", "px", "400")
	foDo(p, "tag.set", "live", "t")
	foDo(p, "tag.set", "gone", "t")
	foDo(r, "replicaof", "127.0.0.1", pp)
	waitOffsetsEqual(t, p, r)
	time.Sleep(700 * time.Millisecond)
	steps := []replicaStep{
		{"dbsize", "2"},
		{"tag.get gone", "[]"},
		{"dbsize", "2"},
		{"tag.members t", "[live]"},
		{"dbsize", "2"},
		{"tag.count t", "1"},
		{"dbsize", "2"},
	}
	replicaSteps(t, r, steps)
	foDo(p, "get", "gone")
	waitOffsetsEqual(t, p, r)
	if got := foDo(r, "dbsize"); got != "1" {
		t.Errorf("replica dbsize after the primary's DEL: %s, want 1", got)
	}
}

// TestReplicaHidesExpiredHashFields: a HotKV replica reads a hash field past its time as
// missing but keeps it for the primary's HDEL (as Redis 7.4's replica): the hash's MEMORY USAGE
// stays the primary's while both hold the field, and drops with the primary's once its read
// reclaims the field.
func TestReplicaHidesExpiredHashFields(t *testing.T) {
	pp, rp := exPort(t), exPort(t)
	p := startEither(t, true, pp)
	r := startEither(t, true, rp)
	foDo(p, "debug", "set-active-expire", "0")
	foDo(p, "hset", "h", "live", "1", "gone", "2")
	foDo(p, "hpexpire", "h", "400", "FIELDS", "1", "gone")
	foDo(r, "replicaof", "127.0.0.1", pp)
	waitOffsetsEqual(t, p, r)
	time.Sleep(700 * time.Millisecond)
	held := foDo(p, "memory", "usage", "h") // the primary reclaims nothing either (no read, no active expiry)
	steps := []replicaStep{
		{"hget h gone", "ERR:redis: nil"},
		{"hexists h gone", "0"},
		{"hlen h", "1"},
		{"hgetall h", "[live 1]"},
		{"hpttl h FIELDS 1 gone", "[-2]"},
		{"memory usage h", held},
	}
	replicaSteps(t, r, steps)
	if got := foDo(p, "hget", "h", "gone"); got != "ERR:redis: nil" { // reclaims it, and sends the HDEL
		t.Fatalf("primary hget: %s", got)
	}
	waitOffsetsEqual(t, p, r)
	if a, b := foDo(p, "memory", "usage", "h"), foDo(r, "memory", "usage", "h"); a != b || a == held {
		t.Errorf("after the primary's HDEL: memory usage %s on the primary, %s on the replica (%s before)", a, b, held)
	}
}
