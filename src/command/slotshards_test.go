package command

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/hotkv/hotkv/pipeline"
	"github.com/hotkv/hotkv/src/cluster"
)

func newSlotShardsEngine() *Engine {
	st := testConfigStore().(testStore)
	return NewEngine(Options{Shards: 8, Databases: 16, Settings: DefaultSettings(), Config: st,
		SlotShards: true})
}

// In cluster mode (Options.SlotShards) a key's shard follows its slot: keys sharing a hash tag
// share a shard, so a multi-key command a cluster allows routes to one shard, where the same
// command on a hash-placed engine needs a barrier over several.
func TestSlotShardsRouteOneShard(t *testing.T) {
	byHash, bySlot := newTestEngine(), newSlotShardsEngine()
	if byHash.SlotShards() || !bySlot.SlotShards() {
		t.Fatalf("SlotShards: hash-placed %v, slot-placed %v", byHash.SlotShards(), bySlot.SlotShards())
	}
	spec := lookup([]byte("mset"))
	barriers := map[*Engine]int{}
	for u := range 200 {
		args := [][]byte{[]byte("MSET")}
		for k := range 6 {
			args = append(args, fmt.Appendf(nil, "{user:%d}:f%d", u, k), []byte("v"))
		}
		for _, e := range []*Engine{byHash, bySlot} {
			tc := newTestConn(t, e)
			s := &pipeline.Slot{Args: args, Cmd: spec, Client: tc.client}
			if e.routeKeys(tc.client, spec, s) == pipeline.TargetBarrier {
				barriers[e]++
			}
		}
	}
	if barriers[bySlot] != 0 {
		t.Fatalf("slot-placed engine: %d of 200 same-tag MSETs routed as barriers", barriers[bySlot])
	}
	if barriers[byHash] == 0 {
		t.Fatal("hash-placed engine: no same-tag MSET spans shards; the comparison shows nothing")
	}
	t.Logf("same-tag MSETs needing a barrier: by hash %d of 200, by slot 0", barriers[byHash])
}

// Keys spread over every shard by slot, a slot's keys all in one shard, and commands (multi-key,
// RENAME across tags, SCAN, DBSIZE) answer as on a hash-placed engine.
func TestSlotShardsPlacement(t *testing.T) {
	e := newSlotShardsEngine()
	perShard := make([]int, len(e.Group.Shards))
	shardOfSlot := map[int]int32{}
	for i := range 20000 {
		k := []byte("key:" + strconv.Itoa(i))
		sh, slot := e.shardOf(k), cluster.KeySlot(k)
		if prev, ok := shardOfSlot[slot]; ok && prev != sh {
			t.Fatalf("slot %d in shards %d and %d", slot, prev, sh)
		}
		shardOfSlot[slot] = sh
		perShard[sh]++
	}
	for sh, n := range perShard {
		if n < 20000/len(perShard)/2 {
			t.Fatalf("shard %d holds %d of 20000 keys: %v", sh, n, perShard)
		}
	}
	ref := newTestEngine()
	a, b := newTestConn(t, e), newTestConn(t, ref)
	script := [][]string{
		{"MSET", "{a}1", "x", "{a}2", "y", "b", "z"},
		{"MGET", "{a}1", "{a}2", "b", "nope"},
		{"RENAME", "{a}1", "{c}1"},
		{"LPUSH", "l", "1", "2"},
		{"LMOVE", "l", "{a}l", "LEFT", "RIGHT"},
		{"SUNIONSTORE", "{a}s", "{a}l"},
		{"DBSIZE"},
		{"EXISTS", "{a}1", "{c}1", "{a}2", "b", "l", "{a}l"},
	}
	for _, cmd := range script {
		if x, y := a.do(cmd...), b.do(cmd...); x != y {
			t.Fatalf("%q: slot-placed %q, hash-placed %q", cmd, x, y)
		}
	}
	for i := range 500 {
		a.do("SET", "k"+strconv.Itoa(i), "v")
	}
	seen, cursor := map[string]bool{}, "0"
	for n := 0; n == 0 || cursor != "0"; n++ {
		var keys []string
		cursor, keys = parseScanReply(t, a.do("SCAN", cursor, "COUNT", "50"))
		for _, k := range keys {
			seen[k] = true
		}
		if n > 10000 {
			t.Fatal("SCAN did not finish")
		}
	}
	if got := a.do("DBSIZE"); got != ":"+strconv.Itoa(len(seen))+"\r\n" {
		t.Fatalf("SCAN saw %d keys, DBSIZE %q", len(seen), got)
	}
}
