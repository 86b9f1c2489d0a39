package command

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hotkv/hotkv/net/resp/resptest"
	"github.com/hotkv/hotkv/pipeline/feed"
)

// Effects of the list commands: keyspace events, replicated form and dirty count, each row's
// expectations as redis-server 7.0.15 showed them (its __keyspace@0__ notifications, the commands
// of its appendonlydir/*.incr.aof with appendfsync always, and rdb_changes_since_last_save before
// and after). Blocked clients served by a push come last: the in-process transcripts cannot hold
// a client blocked while another runs.

// listFx is an engine with notify-keyspace-events KEA, a subscriber to every keyspace
// notification and a feed reader.
type listFx struct {
	t    *testing.T
	e    *Engine
	sub  *testConn
	info *testConn // reads INFO: a barrier, kept off the connections under test
	rd   *feed.Reader
}

func newListFx(t *testing.T) *listFx {
	e := newNotifyAllEngine()
	x := &listFx{t: t, e: e, sub: newTestConn(t, e), info: newTestConn(t, e)}
	x.sub.do("PSUBSCRIBE", "__key*__:*")
	x.rd = e.AttachFeed()
	t.Cleanup(x.rd.Close)
	return x
}

// events returns the keyspace notifications received since the last call, each "key=event",
// checking that each came with its keyevent twin.
func (x *listFx) events() []string {
	x.t.Helper()
	out, _ := x.sub.send(nil)
	var space, event []string
	r := bufio.NewReader(bytes.NewReader(out))
	for {
		v, err := resptest.Read(r)
		if err == io.EOF {
			break
		}
		if err != nil {
			x.t.Fatalf("subscriber read %q: %v", out, err)
		}
		msg, err := v.Strings()
		if err != nil || len(msg) != 4 || msg[0] != "pmessage" {
			x.t.Fatalf("subscriber got %q", out)
		}
		if key, ok := strings.CutPrefix(msg[2], "__keyspace@0__:"); ok {
			space = append(space, key+"="+msg[3])
		} else if name, ok := strings.CutPrefix(msg[2], "__keyevent@0__:"); ok {
			event = append(event, msg[3]+"="+name)
		} else {
			x.t.Fatalf("subscriber got %q", msg)
		}
	}
	if !slices.Equal(space, event) {
		x.t.Fatalf("keyspace events %q, keyevent events %q", space, event)
	}
	return space
}

// feed returns the commands replicated since the last call, each as its arguments joined by
// spaces (every command here runs in database 0).
func (x *listFx) feed() []string {
	x.t.Helper()
	var cmds []string
	for {
		es, err := x.rd.Next()
		if err != nil {
			x.t.Fatal(err)
		}
		if len(es) == 0 {
			return cmds
		}
		for _, e := range es {
			vs, err := resptest.ParseAll(e.Cmd)
			if err != nil || e.DB != 0 {
				x.t.Fatalf("feed entry %d (db %d): %v", e.Seq, e.DB, err)
			}
			for _, v := range vs {
				args, err := v.Strings()
				if err != nil {
					x.t.Fatalf("feed entry %d: %v", e.Seq, err)
				}
				cmds = append(cmds, strings.Join(args, " "))
			}
		}
	}
}

// dirty is INFO's rdb_changes_since_last_save.
func (x *listFx) dirty() int64 {
	x.t.Helper()
	text := replyText(x.t, x.info.do("INFO", "persistence"))
	for _, line := range strings.Split(text, "\r\n") {
		if v, ok := strings.CutPrefix(line, "rdb_changes_since_last_save:"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	x.t.Fatal("no rdb_changes_since_last_save")
	return 0
}

// fxWant is what one step must have raised, replicated and counted.
type fxWant struct {
	events []string
	feed   []string
	dirty  int64
}

// check compares what happened since the last check with want.
func (x *listFx) check(what string, before int64, want fxWant) int64 {
	x.t.Helper()
	after := x.dirty()
	if got := x.events(); !slices.Equal(got, want.events) {
		x.t.Errorf("%s: events %q, want %q", what, got, want.events)
	}
	if got := x.feed(); !slices.Equal(got, want.feed) {
		x.t.Errorf("%s: replicated %q, want %q", what, got, want.feed)
	}
	if after-before != want.dirty {
		x.t.Errorf("%s: dirty +%d, want +%d", what, after-before, want.dirty)
	}
	return after
}

func lev(s ...string) []string { return s }

// Every list write on one connection, in order (a list key k, and str a string key made before).
func TestListEffects(t *testing.T) {
	x := newListFx(t)
	tc := newTestConn(t, x.e)
	tc.do("SET", "str", "v")
	x.events()
	x.feed()
	steps := []struct {
		cmd string
		fxWant
	}{
		{"RPUSH k a b c", fxWant{lev("k=rpush"), lev("RPUSH k a b c"), 3}},
		{"LPUSHX k x y", fxWant{lev("k=lpush"), lev("LPUSHX k x y"), 2}},
		{"LPUSHX nokey x", fxWant{nil, nil, 0}},
		{"RPUSHX k z", fxWant{lev("k=rpush"), lev("RPUSHX k z"), 1}},
		{"LPOP k 0", fxWant{nil, nil, 0}},
		{"LPOP k 2", fxWant{lev("k=lpop"), lev("LPOP k 2"), 2}},
		{"RPOP k 5", fxWant{lev("k=rpop", "k=del"), lev("RPOP k 5"), 4}},
		{"LPOP k", fxWant{nil, nil, 0}},
		{"LPUSH str a", fxWant{nil, nil, 0}},
		{"RPUSH k a b c", fxWant{lev("k=rpush"), lev("RPUSH k a b c"), 3}},
		{"LTRIM k 0 -1", fxWant{lev("k=ltrim"), nil, 0}},
		{"LTRIM k 1 1", fxWant{lev("k=ltrim"), lev("LTRIM k 1 1"), 2}},
		{"LTRIM k 5 6", fxWant{lev("k=ltrim", "k=del"), lev("LTRIM k 5 6"), 1}},
		{"LTRIM nokey 0 1", fxWant{nil, nil, 0}},
		{"RPUSH k a b a c a", fxWant{lev("k=rpush"), lev("RPUSH k a b a c a"), 5}},
		{"LREM k 0 zz", fxWant{nil, nil, 0}},
		{"LREM k -2 a", fxWant{lev("k=lrem"), lev("LREM k -2 a"), 2}},
		{"LREM k 0 a", fxWant{lev("k=lrem"), lev("LREM k 0 a"), 1}},
		{"LREM k 0 b", fxWant{lev("k=lrem"), lev("LREM k 0 b"), 1}},
		{"LREM k 0 c", fxWant{lev("k=lrem", "k=del"), lev("LREM k 0 c"), 1}},
		{"RPUSH k b a", fxWant{lev("k=rpush"), lev("RPUSH k b a"), 2}},
		{"LSET k 0 b", fxWant{lev("k=lset"), lev("LSET k 0 b"), 1}},
		{"LSET k 5 b", fxWant{nil, nil, 0}},
		{"LINSERT k before zz q", fxWant{nil, nil, 0}},
		{"LINSERT k after b q", fxWant{lev("k=linsert"), lev("LINSERT k after b q"), 1}},
		{"LMOVE k k left right", fxWant{lev("k=rpush", "k=lpop"), lev("LMOVE k k left right"), 1}},
		{"LMOVE nokey k left left", fxWant{nil, nil, 0}},
		{"LMOVE k str left left", fxWant{nil, nil, 0}},
		{"RPOPLPUSH k k", fxWant{lev("k=lpush", "k=rpop"), lev("RPOPLPUSH k k"), 1}},
		{"LMPOP 2 nokey k right count 10", fxWant{lev("k=rpop", "k=del"), lev("RPOP k 3"), 3}},
		{"LMPOP 1 nokey left", fxWant{nil, nil, 0}},
		// Blocking commands that find elements are replicated as their non-blocking forms:
		// BLMOVE with its LEFT|RIGHT as typed.
		{"RPUSH k a b c d e", fxWant{lev("k=rpush"), lev("RPUSH k a b c d e"), 5}},
		{"BLPOP nokey k 1", fxWant{lev("k=lpop"), lev("LPOP k"), 1}},
		{"brpop k 1", fxWant{lev("k=rpop"), lev("RPOP k"), 1}},
		{"BLMPOP 1 2 nokey k left count 2", fxWant{lev("k=lpop"), lev("LPOP k 2"), 2}},
		{"blmove k k LeFt RIGHT 1", fxWant{lev("k=rpush", "k=lpop"), lev("LMOVE k k LeFt RIGHT"), 1}},
		{"brpoplpush k k 1", fxWant{lev("k=lpush", "k=rpop"), lev("RPOPLPUSH k k"), 1}},
		{"BLMPOP 0.01 1 nokey left", fxWant{nil, nil, 0}},
		{"BLPOP nokey 0.01", fxWant{nil, nil, 0}},
	}
	before := x.dirty()
	for _, s := range steps {
		tc.do(strings.Fields(s.cmd)...)
		before = x.check(s.cmd, before, s.fxWant)
	}
}

// Moves between two keys, on the same shard and on two: the destination's push comes first, and
// a move that empties its source deletes it.
func TestListMoveEffects(t *testing.T) {
	for _, same := range []bool{true, false} {
		t.Run(fmt.Sprint("same shard ", same), func(t *testing.T) {
			x := newListFx(t)
			src, dst := keyPair(x.e, "mv", same)
			steps := []struct {
				cmd []string
				fxWant
			}{
				{[]string{"RPUSH", src, "a", "b"}, fxWant{lev(src + "=rpush"), lev("RPUSH " + src + " a b"), 2}},
				{[]string{"LMOVE", src, dst, "left", "right"},
					fxWant{lev(dst+"=rpush", src+"=lpop"), lev("LMOVE " + src + " " + dst + " left right"), 1}},
				{[]string{"BRPOPLPUSH", src, dst, "1"},
					fxWant{lev(dst+"=lpush", src+"=rpop", src+"=del"), lev("RPOPLPUSH " + src + " " + dst), 1}},
				{[]string{"LMOVE", src, dst, "left", "right"}, fxWant{nil, nil, 0}},
			}
			tc := newTestConn(t, x.e)
			before := x.dirty()
			for _, s := range steps {
				tc.do(s.cmd...)
				before = x.check(strings.Join(s.cmd, " "), before, s.fxWant)
			}
		})
	}
}

// A blocked client served by a push: its events follow the push's, it is replicated as its
// non-blocking form after the push (BLMOVE with Redis's lowercase left|right), and Redis counts
// no change for a served BLPOP, BRPOP, BLMOVE or BRPOPLPUSH, but every element a served BLMPOP
// pops.
func TestListServedEffects(t *testing.T) {
	x := newListFx(t)
	cs := conns(t, x.e, 3)
	pusher := cs[2]
	before := x.dirty()
	step := func(what string, push []string, want fxWant, waiters ...<-chan string) {
		t.Helper()
		pusher.do(push...)
		for _, ch := range waiters {
			recv(t, ch)
		}
		before = x.check(what, before, want)
	}

	a := blockedDo(t, cs[0], "BLPOP", "q1", "0")
	b := blockedDo(t, cs[1], "BRPOP", "q1", "0")
	step("BLPOP, BRPOP", []string{"RPUSH", "q1", "x", "y"},
		fxWant{lev("q1=rpush", "q1=lpop", "q1=rpop", "q1=del"), lev("RPUSH q1 x y", "LPOP q1", "RPOP q1"), 2}, a, b)

	a = blockedDo(t, cs[0], "BLMPOP", "0", "1", "q3", "RIGHT", "COUNT", "5")
	step("BLMPOP emptying", []string{"RPUSH", "q3", "a", "b", "c"},
		fxWant{lev("q3=rpush", "q3=rpop", "q3=del"), lev("RPUSH q3 a b c", "RPOP q3 3"), 6}, a)
	a = blockedDo(t, cs[0], "BLMPOP", "0", "2", "m1", "q3", "left")
	step("BLMPOP", []string{"RPUSH", "q3", "a", "b"},
		fxWant{lev("q3=rpush", "q3=lpop"), lev("RPUSH q3 a b", "LPOP q3 1"), 3}, a)

	src, dst := keyPair(x.e, "sv", true)
	a = blockedDo(t, cs[0], "BLMOVE", src, dst, "LEFT", "Right", "0")
	step("BLMOVE", []string{"LPUSH", src, "x", "y"},
		fxWant{lev(src+"=lpush", dst+"=rpush", src+"=lpop"),
			lev("LPUSH "+src+" x y", "LMOVE "+src+" "+dst+" left right"), 2}, a)
	pusher.do("DEL", src)
	x.events()
	x.feed()
	before = x.dirty()
	a = blockedDo(t, cs[0], "brpoplpush", src, dst, "0")
	step("BRPOPLPUSH", []string{"LPUSH", src, "z"},
		fxWant{lev(src+"=lpush", dst+"=lpush", src+"=rpop", src+"=del"),
			lev("LPUSH "+src+" z", "RPOPLPUSH "+src+" "+dst), 1}, a)

	// A served BLMOVE that pushes to a key another client waits on serves it in turn.
	pusher.do("DEL", dst)
	x.events()
	x.feed()
	before = x.dirty()
	a = blockedDo(t, cs[0], "BLMOVE", src, dst, "RIGHT", "LEFT", "0")
	b = blockedDo(t, cs[1], "BLPOP", dst, "0")
	step("BLMOVE then BLPOP", []string{"RPUSH", src, "v"},
		fxWant{lev(src+"=rpush", dst+"=lpush", src+"=rpop", src+"=del", dst+"=lpop", dst+"=del"),
			lev("RPUSH "+src+" v", "LMOVE "+src+" "+dst+" right left", "LPOP "+dst), 1}, a, b)
}

// A blocked BLMOVE whose destination is on another shard is woken and served by its own
// connection: replicated and counted as Redis serves it, its events published after its reply
// (the push's may come before or after them).
func TestListServedAcrossShardsEffects(t *testing.T) {
	x := newListFx(t)
	cs := conns(t, x.e, 2)
	src, dst := keyPair(x.e, "xs", false)
	before := x.dirty()
	ch := blockedDo(t, cs[0], "BLMOVE", src, dst, "LEFT", "RIGHT", "0")
	cs[1].do("RPUSH", src, "a", "b")
	if got := recv(t, ch); got != "$1\r\na\r\n" {
		t.Fatalf("BLMOVE: %q", got)
	}
	after := x.dirty()
	evs := x.events()
	slices.Sort(evs)
	want := lev(dst+"=rpush", src+"=lpop", src+"=rpush")
	slices.Sort(want)
	if !slices.Equal(evs, want) {
		t.Errorf("events %q, want %q in some order", evs, want)
	}
	if got, want := x.feed(), lev("RPUSH "+src+" a b", "LMOVE "+src+" "+dst+" left right"); !slices.Equal(got, want) {
		t.Errorf("replicated %q, want %q", got, want)
	}
	if after-before != 2 {
		t.Errorf("dirty +%d, want +2 (the push's)", after-before)
	}
}

// Two connections writing keys of different shards at once: every keyspace message still reaches
// the subscriber beside its keyevent twin (events checks the two sequences are equal), as one
// Redis thread sends them.
func TestEventsOfConcurrentWritersStayPaired(t *testing.T) {
	x := newListFx(t)
	cs := conns(t, x.e, 2)
	a, b := keyPair(x.e, "pw", false)
	done := make(chan struct{})
	for i, k := range []string{a, b} {
		go func() {
			defer func() { done <- struct{}{} }()
			for range 300 {
				cs[i].do("RPUSH", k, "v")
			}
		}()
	}
	<-done
	<-done
	if evs := x.events(); len(evs) != 600 {
		t.Fatalf("%d events, want 600", len(evs))
	}
}
