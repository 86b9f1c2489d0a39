package command

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hotkv/hotkv/pipeline"
)

// TAG.SET, TAG.DEL and TAG.CLEAR are replicated as themselves when they change a tag (one change
// per tag) and raise no event; TAG.INVALIDATE raises "del" for each key it deletes and is
// replicated as DELs of those keys (one per shard hold), never as itself.
func TestTagEffects(t *testing.T) {
	x := newStrFx(t)
	x.run("SET", "k", "v")
	x.check(cmdOf("TAG.SET k a b a"), ":2\r\n", nil, []string{"TAG.SET k a b a"}, 2)
	x.check(cmdOf("TAG.SET k a"), ":0\r\n", nil, nil, 0)
	x.check(cmdOf("TAG.SET nokey a"), "-ERR no such key\r\n", nil, nil, 0)
	x.check(cmdOf("TAG.DEL k a zz"), ":1\r\n", nil, []string{"TAG.DEL k a zz"}, 1)
	x.check(cmdOf("TAG.DEL k zz"), ":0\r\n", nil, nil, 0)
	x.check(cmdOf("TAG.CLEAR k"), ":1\r\n", nil, []string{"TAG.CLEAR k"}, 1)
	x.check(cmdOf("TAG.CLEAR k"), ":0\r\n", nil, nil, 0)
	x.check(cmdOf("TAG.INVALIDATE none"), ":0\r\n", nil, nil, 0)

	var keys []string
	for i := range 200 {
		k := "key" + strconv.Itoa(i)
		keys = append(keys, k)
		x.run("SET", k, "v")
		x.run("TAG.SET", k, "grp"+strconv.Itoa(i%2))
	}
	x.run("SET", "other", "v")
	x.run("TAG.SET", "other", "keep")
	before := x.dirty()
	reply, events, fd := x.run("TAG.INVALIDATE", "grp0", "grp1")
	if reply != ":200\r\n" || x.dirty()-before != 200 {
		t.Fatalf("TAG.INVALIDATE = %q, %d changes; want :200 and 200", reply, x.dirty()-before)
	}
	var wantEvents, deleted []string
	for _, k := range keys {
		wantEvents = append(wantEvents, "del "+k)
	}
	for _, f := range fd {
		args := strings.Fields(f)
		if args[0] != "DEL" {
			t.Fatalf("TAG.INVALIDATE replicated as %q", f)
		}
		deleted = append(deleted, args[1:]...)
	}
	slices.Sort(events)
	slices.Sort(wantEvents)
	slices.Sort(deleted)
	slices.Sort(keys)
	if !slices.Equal(events, wantEvents) || !slices.Equal(deleted, keys) {
		t.Fatalf("events %d (%q…), DELs of %d keys; want 200 of each", len(events), events[:min(3, len(events))], len(deleted))
	}
	if len(fd) > len(x.e.Group.Shards) {
		t.Fatalf("%d DELs for %d shards: want one per shard hold", len(fd), len(x.e.Group.Shards))
	}
	if got := x.tc.do("EXISTS", "other"); got != ":1\r\n" {
		t.Fatalf("a key of another tag: EXISTS = %q", got)
	}
}

// A tagged key that expires is replicated as its DEL and raises "expired" when TAG.MEMBERS or
// TAG.COUNT reclaims it, as any lookup does; its tags go with it.
func TestTagExpiredEffects(t *testing.T) {
	x := newStrFx(t)
	x.run("SET", "k", "v")
	x.run("TAG.SET", "k", "a")
	x.run("PEXPIREAT", "k", "1000000000000000") // far future: nothing yet
	x.check(cmdOf("TAG.COUNT a"), ":1\r\n", nil, nil, 0)
	ks := x.e.keyspace(0, []byte("k"))
	x.e.Group.Do(int(x.e.shardOf([]byte("k"))), func(*pipeline.Shard) {
		ks.SetExpire(ks.Peek([]byte("k"), 0), 1) // passed, not reclaimed yet
	})
	x.check(cmdOf("TAG.MEMBERS a"), "*0\r\n", []string{"expired k"}, []string{"DEL k"}, 0)
	x.check(cmdOf("TAG.COUNT a"), ":0\r\n", nil, nil, 0)
}
