package command

import (
	"bufio"
	"bytes"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/net/resp/resptest"
	"github.com/hotkv/hotkv/pipeline/feed"
)

// Effects the differential against Redis cannot check: HotKV's own NEXPIRE and NEXPIREAT, and
// the forms that depend on lazyfree settings the differential leaves at their defaults. The
// Redis forms were read from redis-server 7.0.15's AOF: EXPIRE with a time past and GETEX with
// an EXAT past propagate UNLINK under lazyfree-lazy-expire, GETDEL propagates UNLINK under
// lazyfree-lazy-user-del (DEL stays DEL).

// strFx is an engine with keyspace events on (K, E and every class but n and m), a client, a
// subscriber to every notification and a feed reader.
type strFx struct {
	t   *testing.T
	e   *Engine
	tc  *testConn
	sub *testConn
	rd  *feed.Reader
}

func newStrFx(t *testing.T) *strFx {
	e := newNotifyAllEngine()
	x := &strFx{t: t, e: e, tc: newTestConn(t, e), sub: newTestConn(t, e)}
	x.sub.do("PSUBSCRIBE", "__key*__:*")
	x.rd = e.AttachFeed()
	t.Cleanup(x.rd.Close)
	return x
}

// lazyExpire sets lazyfree-lazy-expire.
func (x *strFx) lazyExpire(on bool) {
	s := *x.e.Settings()
	s.LazyfreeLazyExpire = on
	x.e.SetSettings(s)
}

// run sends one command and returns its reply, the keyevent notifications it raised (each
// "event key") and its replicated form (each command's arguments joined by spaces).
func (x *strFx) run(args ...string) (reply string, events, feed []string) {
	x.t.Helper()
	reply = x.tc.do(args...)
	out, _ := x.sub.send(nil)
	r := bufio.NewReader(bytes.NewReader(out))
	for {
		v, err := resptest.Read(r)
		if err == io.EOF {
			break
		}
		msg, err2 := v.Strings()
		if err != nil || err2 != nil || len(msg) != 4 || msg[0] != "pmessage" {
			x.t.Fatalf("subscriber got %q", out)
		}
		if ch, ok := strings.CutPrefix(msg[2], "__keyevent@0__:"); ok {
			events = append(events, ch+" "+msg[3])
		}
	}
	for {
		es, err := x.rd.Next()
		if err != nil {
			x.t.Fatal(err)
		}
		if len(es) == 0 {
			break
		}
		for _, e := range es {
			vs, err := resptest.ParseAll(e.Cmd)
			if err != nil {
				x.t.Fatal(err)
			}
			for _, v := range vs {
				a, _ := v.Strings()
				feed = append(feed, strings.Join(a, " "))
			}
		}
	}
	return reply, events, feed
}

// dirty reads rdb_changes_since_last_save.
func (x *strFx) dirty() int64 {
	x.t.Helper()
	info := x.tc.do("INFO", "persistence")
	_, v, _ := strings.Cut(info, "rdb_changes_since_last_save:")
	n, err := strconv.ParseInt(strings.TrimSpace(strings.SplitN(v, "\r\n", 2)[0]), 10, 64)
	if err != nil {
		x.t.Fatalf("INFO persistence: %q", info)
	}
	return n
}

// check runs args and fails unless reply, events, feed and the change count are as given.
func (x *strFx) check(args []string, reply string, events, feed []string, dirty int64) {
	x.t.Helper()
	before := x.dirty()
	r, ev, fd := x.run(args...)
	if d := x.dirty() - before; r != reply || !slices.Equal(ev, events) || !slices.Equal(fd, feed) || d != dirty {
		x.t.Errorf("%q:\n  reply %q, events %q, feed %q, dirty %d\n  want  %q, events %q, feed %q, dirty %d",
			args, r, ev, fd, d, reply, events, feed, dirty)
	}
}

func cmdOf(s string) []string { return strings.Fields(s) }

func TestNExpireEffects(t *testing.T) {
	x := newStrFx(t)
	x.run("SET", "k", "v")
	// The nanosecond time is rounded up to its millisecond; the options were HotKV's decision.
	x.check(cmdOf("NEXPIREAT k 4102444800123456789 NX"), ":1\r\n", []string{"expire k"},
		[]string{"PEXPIREAT k 4102444800124"}, 1)
	x.check(cmdOf("NEXPIREAT k 4102444800123000000 LT"), ":1\r\n", []string{"expire k"},
		[]string{"PEXPIREAT k 4102444800123"}, 1)
	x.check(cmdOf("NEXPIREAT k 4102444800123000000 GT"), ":0\r\n", nil, nil, 0)
	x.check(cmdOf("NEXPIRE nokey 1000"), ":0\r\n", nil, nil, 0)

	_, _, fd := x.run("NEXPIRE", "k", "1500000000000") // 1500 s
	e := x.e.keyspace(0, []byte("k")).FindQuiet([]byte("k"), time.Now().UnixNano())
	ms, err := strconv.ParseInt(strings.TrimPrefix(fd[0], "PEXPIREAT k "), 10, 64)
	if len(fd) != 1 || err != nil || e == nil || ms*int64(time.Millisecond) < e.ExpireAt() ||
		ms*int64(time.Millisecond)-e.ExpireAt() >= int64(time.Millisecond) {
		t.Fatalf("NEXPIRE replicated as %q for an expiry at %d ns", fd, e.ExpireAt())
	}

	// A time past deletes the key: DEL, or UNLINK under lazyfree-lazy-expire.
	x.check(cmdOf("NEXPIREAT k 1"), ":1\r\n", []string{"del k"}, []string{"DEL k"}, 1)
	x.lazyExpire(true)
	x.run("SET", "k", "v")
	x.check(cmdOf("NEXPIRE k -1"), ":1\r\n", []string{"del k"}, []string{"UNLINK k"}, 1)
}

func TestLazyfreeForms(t *testing.T) {
	x := newStrFx(t)
	x.run("SET", "k", "v")
	x.check(cmdOf("GETDEL k"), "$1\r\nv\r\n", []string{"del k"}, []string{"DEL k"}, 1)

	x.lazyExpire(true)
	x.run("SET", "k", "v")
	x.check(cmdOf("EXPIRE k 0"), ":1\r\n", []string{"del k"}, []string{"UNLINK k"}, 1)
	x.run("SET", "k", "v")
	x.check(cmdOf("GETEX k EXAT 1"), "$1\r\nv\r\n", []string{"del k"}, []string{"UNLINK k"}, 1)
	x.run("SET", "k", "v")
	x.check(cmdOf("DEL k"), ":1\r\n", []string{"del k"}, []string{"DEL k"}, 1) // as typed

	if r := x.tc.do("CONFIG", "SET", "lazyfree-lazy-user-del", "yes"); r != "+OK\r\n" {
		t.Fatalf("CONFIG SET lazyfree-lazy-user-del: %q", r)
	}
	x.run("SET", "k", "v")
	x.check(cmdOf("GETDEL k"), "$1\r\nv\r\n", []string{"del k"}, []string{"UNLINK k"}, 1)
	x.check(cmdOf("GETDEL k"), "$-1\r\n", nil, nil, 0)
}

// SCAN reclaims the expired keys it meets as Redis's does: "expired" and a DEL, from the SCAN's
// own call.
func TestScanReclaimEffects(t *testing.T) {
	x := newStrFx(t)
	x.run("SET", "gone", "v", "PX", "1")
	time.Sleep(5 * time.Millisecond)
	x.check(cmdOf("SCAN 0 COUNT 1000"), "*2\r\n$1\r\n0\r\n*0\r\n", []string{"expired gone"},
		[]string{"DEL gone"}, 0)
}

// The database-wide commands: a change per key they remove, replicated even when there was none.
// Each is a barrier after another on the same connection, whose replicated form must not be
// taken for already propagated.
func TestFlushEffects(t *testing.T) {
	x := newStrFx(t)
	x.check(cmdOf("SWAPDB 0 0"), "+OK\r\n", nil, []string{"SWAPDB 0 0"}, 1)
	x.check(cmdOf("SWAPDB 0 x"), "-ERR invalid second DB index\r\n", nil, nil, 0)
	x.check(cmdOf("FLUSHALL"), "+OK\r\n", nil, []string{"FLUSHALL"}, 0)
	x.run("MSET", "a", "1", "b", "2")
	x.run("SELECT", "1")
	x.run("SET", "c", "3")
	x.check(cmdOf("FLUSHDB ASYNC"), "+OK\r\n", nil, []string{"FLUSHDB ASYNC"}, 1)
	x.check(cmdOf("FLUSHALL"), "+OK\r\n", nil, []string{"FLUSHALL"}, 2)
	x.check(cmdOf("SWAPDB 1 2"), "+OK\r\n", nil, []string{"SWAPDB 1 2"}, 1)
}
