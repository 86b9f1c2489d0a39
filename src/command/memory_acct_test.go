package command

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/hotkv/hotkv/ds/keyspace"
)

// recountUsed is the from-scratch recount: MEMORY USAGE (default samples) of every key of every
// database, summed per shard, expired keys not yet reclaimed included (they still count).
func recountUsed(e *Engine) (perShard []int64) {
	e.Group.LockAll()
	defer e.Group.UnlockAll()
	for i := range e.Group.Shards {
		var n int64
		for _, ks := range e.data(int32(i)).dbs {
			for cur := uint64(0); ; {
				cur = ks.Scan(cur, func(en *keyspace.Entry) { n += keySize(en, acctSamples) })
				if cur == 0 {
					break
				}
			}
		}
		perShard = append(perShard, n)
	}
	return perShard
}

// accountedUsed is each shard's counter.
func accountedUsed(e *Engine) (perShard []int64) {
	e.Group.LockAll()
	defer e.Group.UnlockAll()
	for i := range e.Group.Shards {
		perShard = append(perShard, e.data(int32(i)).mem.used.Load())
	}
	return perShard
}

// memAcctOps are write commands over every type, on keys k0..k39 of databases 0 and 1, with
// values of sizes that cross each type's encodings; MOVE, COPY ... DB and RENAME move values
// between keyspaces and shards, DEL/EXPIRE/FLUSHDB remove them.
func memAcctOp(r *rand.Rand) []string {
	k := func() string { return "k" + strconv.Itoa(r.IntN(40)) }
	v := func() string {
		n := []int{1, 8, 30, 70, 300}[r.IntN(5)]
		b := make([]byte, n)
		for i := range b {
			b[i] = 'a' + byte(r.IntN(26))
		}
		return string(b)
	}
	num := func() string { return strconv.Itoa(r.IntN(1000)) }
	many := func(cmd ...string) []string {
		for range 1 + r.IntN(3)*r.IntN(80) {
			cmd = append(cmd, v())
		}
		return cmd
	}
	switch r.IntN(24) {
	case 0:
		return []string{"SET", k(), v()}
	case 1:
		return []string{"APPEND", k(), v()}
	case 2:
		return []string{"SETRANGE", k(), num(), v()}
	case 3:
		return []string{"INCRBY", k(), num()}
	case 4:
		return []string{"MSET", k(), v(), k(), v(), k(), v()}
	case 5:
		return many("RPUSH", k())
	case 6:
		return []string{"LPOP", k(), "3"}
	case 7:
		cmd := []string{"HSET", k()}
		for range 1 + r.IntN(3)*r.IntN(200) {
			cmd = append(cmd, v(), v())
		}
		return cmd
	case 8:
		return []string{"HDEL", k(), v()}
	case 9:
		return many("SADD", k())
	case 10:
		cmd := []string{"SADD", k()}
		for range 1 + r.IntN(600) {
			cmd = append(cmd, num())
		}
		return cmd
	case 11:
		return []string{"SPOP", k(), "5"}
	case 12:
		cmd := []string{"ZADD", k()}
		for range 1 + r.IntN(3)*r.IntN(100) {
			cmd = append(cmd, num(), v())
		}
		return cmd
	case 13:
		return []string{"ZPOPMIN", k(), "4"}
	case 14:
		return []string{"XADD", k(), "*", "f", v(), "g", v()}
	case 15:
		return []string{"DEL", k(), k()}
	case 16:
		return []string{"RENAME", k(), k()}
	case 17:
		return []string{"MOVE", k(), "1"}
	case 18:
		return []string{"COPY", k(), k(), "DB", "1", "REPLACE"}
	case 19:
		return []string{"SUNIONSTORE", k(), k(), k()}
	case 20:
		return []string{"PEXPIRE", k(), strconv.Itoa(1 + r.IntN(5))}
	case 21:
		return []string{"SETBIT", k(), num(), "1"}
	case 22:
		return []string{"PFADD", k(), v(), v()}
	default:
		if r.IntN(20) == 0 {
			return []string{"FLUSHDB"}
		}
		return []string{"GETDEL", k()}
	}
}

// TestUsedMemoryAgainstRecount: after every step of a random mix of writes across all types
// (including ones that fail with WRONGTYPE, keys that expire while commands run, values moved
// between databases and shards), each shard's counter equals a from-scratch recount.
func TestUsedMemoryAgainstRecount(t *testing.T) {
	for seed := range uint64(3) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			e := newTestEngine()
			tc := newTestConn(t, e)
			r := rand.New(rand.NewPCG(seed, 18))
			for step := range 3000 {
				if r.IntN(10) == 0 {
					tc.do("SELECT", strconv.Itoa(r.IntN(2)))
				}
				cmd := memAcctOp(r)
				tc.do(cmd...)
				got, want := accountedUsed(e), recountUsed(e)
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("step %d (%q): shard %d counts %d, a recount %d", step, cmd, i, got[i], want[i])
					}
				}
			}
			var total int64
			for _, n := range accountedUsed(e) {
				total += n
			}
			if total == 0 {
				t.Fatal("nothing was counted: the mix wrote nothing")
			}
		})
	}
}
