package command

import (
	"bytes"
	"testing"
	"time"

	"github.com/hotkv/hotkv/ds/keyspace"
)

// Effects of the vector-set commands. Redis 8.0's vset.c raises no keyspace events of its own
// and replicates VADD (when it added), VREM and VSETATTR verbatim (RedisModule_ReplicateVerbatim);
// what differs here is HotKV's choice, written in docs/decisions.md ("Vector sets"): events of
// class d (module) named after the command, VADD's update replicated too, VSIM.SET's TTL
// replicated as PXAT, and an expired element replicated as VSIM.DEL before what met it.
func TestVsetEffects(t *testing.T) {
	x := newHashFx(t)
	st := *x.e.Settings()
	st.NotifyKeyspaceEvents |= int64(NotifyModule) // 'A' includes d (module) in Redis and src/config
	x.e.SetSettings(st)
	blob := "\x00\x00\x80\x3f\x00\x00\x00\x00" // (1, 0)
	x.check([]hashEffect{
		{cmd: []string{"VADD", "k", "VALUES", "2", "1", "0", "a"}, reply: ":1\r\n", events: ev("vadd", "k"),
			feed: []string{"0:VADD k VALUES 2 1 0 a"}, dirty: 1},
		{cmd: []string{"VADD", "k", "VALUES", "2", "0", "1", "a"}, reply: ":0\r\n", events: ev("vadd", "k"),
			feed: []string{"0:VADD k VALUES 2 0 1 a"}, dirty: 1},
		{cmd: []string{"VADD", "k", "VALUES", "2", "1", "x", "a"}, reply: "-ERR invalid vector specification\r\n"},
		{cmd: []string{"VSETATTR", "k", "a", `{"n":1}`}, reply: ":1\r\n", events: ev("vsetattr", "k"),
			feed: []string{`0:VSETATTR k a {"n":1}`}, dirty: 1},
		{cmd: []string{"VSETATTR", "k", "zz", `{}`}, reply: ":0\r\n"},
		{cmd: []string{"VSIM", "k", "ELE", "a"}, reply: "*1\r\n$1\r\na\r\n"},
		{cmd: []string{"VREM", "k", "zz"}, reply: ":0\r\n"},
		{cmd: []string{"VREM", "k", "a"}, reply: ":1\r\n", events: evs(ev("vrem", "k"), ev("del", "k")),
			feed: []string{"0:VREM k a"}, dirty: 1},
		{cmd: []string{"VSIM.CREATEINDEX", "h", "DIM", "2"}, reply: "+OK\r\n", events: ev("vsim.createindex", "h"),
			feed: []string{"0:VSIM.CREATEINDEX h DIM 2"}, dirty: 1},
		{cmd: []string{"VSIM.SET", "h", "TTL", "50", "ITEMS", "1", "x", blob}, reply: ":1\r\n", events: ev("vsim.set", "h"),
			feed: []string{"0:VSIM.SET h PXAT ~" + msFromNow(50*time.Millisecond) + " ITEMS 1 x " + blob}, dirty: 1},
		{cmd: []string{"VSIM.SET", "h", "TAGS", "2", "p", "q", "ITEMS", "1", "y", blob}, reply: ":1\r\n", events: ev("vsim.set", "h"),
			feed: []string{"0:VSIM.SET h TAGS 2 p q ITEMS 1 y " + blob}, dirty: 1},
	})
	time.Sleep(60 * time.Millisecond)
	// A read skips the expired element and changes nothing.
	x.check([]hashEffect{
		{cmd: []string{"VCARD", "h"}, reply: ":1\r\n"},
		{cmd: []string{"VISMEMBER", "h", "x"}, reply: ":0\r\n"},
		{cmd: []string{"VSIM.SEARCH", "h", "ELE", "y"}, reply: "*1\r\n$1\r\ny\r\n"},
	})
	// A write removes it first: VSIM.DEL replicated before the write's own form.
	x.check([]hashEffect{
		{cmd: []string{"VSIM.DEL", "h", "nosuch"}, reply: ":0\r\n", events: ev("vexpired", "h"),
			feed: []string{"0:VSIM.DEL h x"}},
		{cmd: []string{"VSIM.SET", "h", "TTL", "10", "ITEMS", "1", "z", blob}, reply: ":1\r\n", events: ev("vsim.set", "h"),
			feed: []string{"0:VSIM.SET h PXAT ~" + msFromNow(10*time.Millisecond) + " ITEMS 1 z " + blob}, dirty: 1},
	})
	// The active cycle removes what nobody touches; an index made by VSIM.CREATEINDEX stays.
	time.Sleep(20 * time.Millisecond)
	x.events()
	x.feed()
	x.e.ActiveExpire(50 * time.Millisecond)
	if got := x.feed(); !sameFeed(got, []string{"0:VSIM.DEL h z"}) {
		t.Errorf("active expiry replicated %q", got)
	}
	x.check([]hashEffect{
		{cmd: []string{"VCARD", "h"}, reply: ":1\r\n"},
		{cmd: []string{"VSIM.DEL", "h", "y"}, reply: ":1\r\n", events: ev("vsim.del", "h"), feed: []string{"0:VSIM.DEL h y"}, dirty: 1},
		{cmd: []string{"TYPE", "h"}, reply: "+vectorset\r\n"},
		{cmd: []string{"VCARD", "h"}, reply: ":0\r\n"},
	})
}

// TestVsetExpiryAfterMoves: the active cycle reclaims expiring elements of a set renamed after
// VSIM.SET queued it, once a write queued it under its new name, and of a set loaded from an
// RDB (queued by its first write there).
func TestVsetExpiryAfterMoves(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	blob := "\x00\x00\x80\x3f\x00\x00\x00\x00"
	tc.do("VSIM.CREATEINDEX", "a", "DIM", "2")
	tc.do("VSIM.SET", "a", "TTL", "20", "ITEMS", "1", "x", blob)
	tc.do("VSIM.SET", "a", "ITEMS", "1", "keep", blob)
	tc.do("RENAME", "a", "b")
	tc.do("VSIM.SET", "b", "ITEMS", "1", "keep2", blob) // queues b
	time.Sleep(30 * time.Millisecond)
	e.ActiveExpire(50 * time.Millisecond)
	ks := e.keyspace(0, []byte("b"))
	v := keyspace.Obj[vsetValue](ks.FindQuiet([]byte("b"), time.Now().UnixNano()))
	if v.Len() != 2 || len(v.ttl) != 0 {
		t.Fatalf("after the cycle: %d elements, %d expiring; want 2, 0", v.Len(), len(v.ttl))
	}
	// After a load the set is queued by its first write.
	tc.do("VSIM.SET", "b", "TTL", "20", "ITEMS", "1", "y", blob)
	file := writeRDB(t, e, RDBOptions{})
	dst := newTestEngine()
	if _, err := dst.LoadRDB(bytes.NewReader(file), LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	dc := newTestConn(t, dst)
	dc.do("VSIM.DEL", "b", "nosuch")
	time.Sleep(30 * time.Millisecond)
	dst.ActiveExpire(50 * time.Millisecond)
	v = keyspace.Obj[vsetValue](dst.keyspace(0, []byte("b")).FindQuiet([]byte("b"), time.Now().UnixNano()))
	if v.Len() != 2 {
		t.Fatalf("loaded set after the cycle: %d elements, want 2", v.Len())
	}
}
