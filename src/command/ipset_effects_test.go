package command

import (
	"bytes"
	"testing"
	"time"

	"github.com/hotkv/hotkv/ds/keyspace"
)

// Effects of the IP set commands (docs/ipsets.md, "Events and replication"): events of class d
// named ipset.add, ipset.del, ipset.swap and ipset.expired ("del" when the key goes); IPSET.ADD
// with an expiry replicated with PXAT; an expired entry replicated as IPSET.DEL key entry before
// what met it, and by the active cycle.
func TestIPSetEffects(t *testing.T) {
	x := newHashFx(t)
	st := *x.e.Settings()
	st.NotifyKeyspaceEvents |= int64(NotifyModule)
	x.e.SetSettings(st)
	x.check([]hashEffect{
		{cmd: []string{"IPSET.ADD", "k", "10.0.0.0/8", "1.2.3.4"}, reply: ":2\r\n", events: ev("ipset.add", "k"),
			feed: []string{"0:IPSET.ADD k 10.0.0.0/8 1.2.3.4"}, dirty: 2},
		{cmd: []string{"IPSET.ADD", "k", "NX", "1.2.3.4"}, reply: ":0\r\n"},
		{cmd: []string{"IPSET.ADD", "k", "TTL", "1", "LABEL", "x", "5.5.5.5"}, reply: ":1\r\n", events: ev("ipset.add", "k"),
			feed: []string{"0:IPSET.ADD k PXAT ~" + msFromNow(time.Second) + " LABEL x 5.5.5.5"}, dirty: 1},
		{cmd: []string{"IPSET.ADD", "k", "PX", "30", "NOMATCH", "LABELS", "6.6.6.6", "y"}, reply: ":1\r\n", events: ev("ipset.add", "k"),
			feed: []string{"0:IPSET.ADD k PXAT ~" + msFromNow(30*time.Millisecond) + " NOMATCH LABELS 6.6.6.6 y"}, dirty: 1},
		{cmd: []string{"IPSET.CONTAINS", "k", "1.2.3.4"}, reply: ":1\r\n"},
		{cmd: []string{"IPSET.DEL", "k", "9.9.9.9"}, reply: ":0\r\n"},
		{cmd: []string{"IPSET.DEL", "k", "1.2.3.4"}, reply: ":1\r\n", events: ev("ipset.del", "k"),
			feed: []string{"0:IPSET.DEL k 1.2.3.4"}, dirty: 1},
		{cmd: []string{"IPSET.ADD", "k", "PXAT", "1", "10.0.0.0/8", "7.7.7.7"}, reply: ":0\r\n", events: ev("ipset.del", "k"),
			feed: []string{"0:IPSET.DEL k 10.0.0.0/8"}, dirty: 1},
		{cmd: []string{"IPSET.SWAP", "k", "j"}, reply: "+OK\r\n", events: evs(ev("del", "k"), ev("ipset.swap", "j")),
			feed: []string{"0:IPSET.SWAP k j"}, dirty: 1},
	})
	time.Sleep(40 * time.Millisecond)
	// A write removes the expired entry first, replicated before the write's own form.
	x.check([]hashEffect{
		{cmd: []string{"IPSET.CARD", "j"}, reply: ":1\r\n"},
		{cmd: []string{"IPSET.DEL", "j", "9.9.9.9"}, reply: ":0\r\n", events: ev("ipset.expired", "j"),
			feed: []string{"0:IPSET.DEL j 6.6.6.6"}},
	})
	// The active cycle removes what nobody touches; the key goes with its last entry.
	time.Sleep(1000 * time.Millisecond)
	x.events()
	x.feed()
	x.e.ActiveExpire(50 * time.Millisecond)
	if got := x.feed(); !sameFeed(got, []string{"0:IPSET.DEL j 5.5.5.5"}) {
		t.Errorf("active expiry replicated %q", got)
	}
	x.check([]hashEffect{{cmd: []string{"EXISTS", "j"}, reply: ":0\r\n"}})
}

// TestIPSetExpiryAfterMoves: a set renamed after its entries were queued, and a set loaded from
// an RDB, are reclaimed by the active cycle once a write queued them under their name.
func TestIPSetExpiryAfterMoves(t *testing.T) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	tc.do("IPSET.ADD", "a", "PX", "20", "1.1.1.1")
	tc.do("IPSET.ADD", "a", "2.2.2.2")
	tc.do("RENAME", "a", "b")
	tc.do("IPSET.DEL", "b", "9.9.9.9") // queues b
	time.Sleep(30 * time.Millisecond)
	e.ActiveExpire(50 * time.Millisecond)
	v := keyspace.Obj[ipsetValue](e.keyspace(0, []byte("b")).FindQuiet([]byte("b"), time.Now().UnixNano()))
	if v.Len() != 1 {
		t.Fatalf("after the cycle: %d entries, want 1", v.Len())
	}
	tc.do("IPSET.ADD", "b", "PX", "400", "3.3.3.3")
	file := writeRDB(t, e, RDBOptions{})
	dst := newTestEngine()
	if _, err := dst.LoadRDB(bytes.NewReader(file), LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	dc := newTestConn(t, dst)
	dc.do("IPSET.DEL", "b", "9.9.9.9")
	time.Sleep(450 * time.Millisecond)
	dst.ActiveExpire(50 * time.Millisecond)
	v = keyspace.Obj[ipsetValue](dst.keyspace(0, []byte("b")).FindQuiet([]byte("b"), time.Now().UnixNano()))
	if v.Len() != 1 {
		t.Fatalf("loaded set after the cycle: %d entries, want 1", v.Len())
	}
}
