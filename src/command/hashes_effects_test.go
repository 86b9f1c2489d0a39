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

// Effects of Redis 7.4's hash field expiry, which the reference redis-server 7.0.15 lacks, so these
// expectations are NOT recorded from a server: they are written from Redis 7.4's t_hash.c.
//
//   - hashTypeSetExDone (HEXPIRE, HPEXPIRE, HEXPIREAT, HPEXPIREAT): a change counted per field set
//     or deleted; "hexpire" if fields were only set, "hdel" if any was deleted, then "del" if none
//     is left. hexpireGenericCommand replicates it as HPEXPIREAT key <unix ms> [cond] FIELDS n of
//     the fields set (name and time kept when the command was HPEXPIREAT, the count kept when every
//     field was set), and not at all when none was; a field whose time has passed is deleted and
//     replicated as HDEL key field at once (propagateHashFieldDeletion).
//   - hpersistCommand: one change and one "hpersist" if any field lost its expiry; replicated as
//     itself.
//   - hashTypeExpire (active expiry, and the reclaim HotKV runs whenever a command touches the
//     hash, as Redis does in HRANDFIELD): no change counted, each expired field's HDEL replicated
//     on its own, "hexpired" once per hash, then "del" if none is left.
//
// HotKV replicates the HDELs of expired fields before the command that met them, each on its own,
// as it does expired keys' DELs (Redis 7.0's propagate at once); Redis 7.2+ would put a command's
// lazy deletions and its own replicated form in one MULTI/EXEC.

// hashFx is an engine with notify-keyspace-events KEA, a client, a subscriber to every keyspace
// notification and a feed reader.
type hashFx struct {
	t   *testing.T
	e   *Engine
	tc  *testConn
	sub *testConn
	rd  *feed.Reader
}

func newHashFx(t *testing.T) *hashFx {
	e := newNotifyAllEngine()
	x := &hashFx{t: t, e: e, tc: newTestConn(t, e), sub: newTestConn(t, e)}
	x.sub.do("PSUBSCRIBE", "__key*__:*")
	x.rd = e.AttachFeed()
	t.Cleanup(x.rd.Close)
	return x
}

// events returns the notifications the subscriber received since the last call, each as
// "channel message".
func (x *hashFx) events() []string {
	x.t.Helper()
	out, _ := x.sub.send(nil)
	var evs []string
	r := bufio.NewReader(bytes.NewReader(out))
	for {
		v, err := resptest.Read(r)
		if err == io.EOF {
			return evs
		}
		if err != nil {
			x.t.Fatalf("subscriber read %q: %v", out, err)
		}
		msg, err := v.Strings()
		if err != nil || len(msg) != 4 || msg[0] != "pmessage" {
			x.t.Fatalf("subscriber got %q", out)
		}
		evs = append(evs, msg[2]+" "+msg[3])
	}
}

// feed returns the commands replicated since the last call, each as "db:arg arg ...".
func (x *hashFx) feed() []string {
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
			if err != nil {
				x.t.Fatalf("feed entry %d: %v", e.Seq, err)
			}
			for _, v := range vs {
				args, err := v.Strings()
				if err != nil {
					x.t.Fatalf("feed entry %d: %v", e.Seq, err)
				}
				cmds = append(cmds, strconv.Itoa(e.DB)+":"+strings.Join(args, " "))
			}
		}
	}
}

// dirty is INFO's rdb_changes_since_last_save.
func (x *hashFx) dirty() int64 {
	x.t.Helper()
	text := replyText(x.t, x.tc.do("INFO", "persistence"))
	for _, line := range strings.Split(text, "\r\n") {
		if v, ok := strings.CutPrefix(line, "rdb_changes_since_last_save:"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	x.t.Fatal("no rdb_changes_since_last_save")
	return 0
}

// hashEffect is one command and what it must reply, raise, replicate and count.
type hashEffect struct {
	cmd    []string
	reply  string
	events []string // keyspace then keyevent channel per event, as Redis publishes them
	feed   []string // "db:args"; an argument "~T" is a unix ms time within 2 s of T
	dirty  int64
}

// ev is one event on key in database 0, on both channels.
func ev(event, key string) []string {
	return []string{"__keyspace@0__:" + key + " " + event, "__keyevent@0__:" + event + " " + key}
}

func evs(pairs ...[]string) []string { return slices.Concat(pairs...) }

func (x *hashFx) check(steps []hashEffect) {
	x.t.Helper()
	x.events()
	x.feed()
	for _, s := range steps {
		before := x.dirty()
		if got := x.tc.do(s.cmd...); s.reply != "" && got != s.reply {
			x.t.Errorf("%q replied %q, want %q", s.cmd, got, s.reply)
		}
		if got := x.events(); !slices.Equal(got, s.events) {
			x.t.Errorf("%q raised\n  %q\nwant\n  %q", s.cmd, got, s.events)
		}
		if got := x.feed(); !sameFeed(got, s.feed) {
			x.t.Errorf("%q replicated\n  %q\nwant\n  %q", s.cmd, got, s.feed)
		}
		if d := x.dirty() - before; d != s.dirty {
			x.t.Errorf("%q counted %d changes, want %d", s.cmd, d, s.dirty)
		}
	}
}

// sameFeed compares replicated commands; "~T" in want matches a number within 2000 of T.
func sameFeed(got, want []string) bool {
	return slices.EqualFunc(got, want, func(g, w string) bool {
		ga, wa := strings.Fields(g), strings.Fields(w)
		return slices.EqualFunc(ga, wa, func(a, b string) bool {
			t, ok := strings.CutPrefix(b, "~")
			if !ok {
				return a == b
			}
			x, err1 := strconv.ParseInt(a, 10, 64)
			y, err2 := strconv.ParseInt(t, 10, 64)
			return err1 == nil && err2 == nil && max(x-y, y-x) <= 2000
		})
	})
}

func msFromNow(d time.Duration) string {
	return strconv.FormatInt(time.Now().Add(d).UnixMilli(), 10)
}

func TestHashFieldExpireEffects(t *testing.T) {
	x := newHashFx(t)
	at := time.Now().Add(48 * time.Hour).UnixMilli() // fixed future times, ms and s
	atMs, atS := strconv.FormatInt(at, 10), strconv.FormatInt(at/1000+3600, 10)
	x.check([]hashEffect{
		{[]string{"HSET", "h", "a", "1", "b", "2", "c", "3"}, ":3\r\n", ev("hset", "h"),
			[]string{"0:HSET h a 1 b 2 c 3"}, 3},
		// Set: "hexpire", HPEXPIREAT of the fields set only, the count rewritten.
		{[]string{"HEXPIRE", "h", "100", "FIELDS", "2", "a", "nope"}, "*2\r\n:1\r\n:-2\r\n", ev("hexpire", "h"),
			[]string{"0:HPEXPIREAT h ~" + msFromNow(100*time.Second) + " FIELDS 1 a"}, 1},
		// Nothing set (NX on a field with an expiry): nothing raised, replicated or counted.
		{[]string{"HPEXPIRE", "h", "100000", "NX", "FIELDS", "1", "a"}, "*1\r\n:0\r\n", nil, nil, 0},
		// HPEXPIREAT keeps its name as sent, its time, condition and count when every field was set.
		{[]string{"hpexpireat", "h", atMs, "xx", "fields", "1", "a"}, "*1\r\n:1\r\n", ev("hexpire", "h"),
			[]string{"0:hpexpireat h " + atMs + " xx fields 1 a"}, 1},
		// HEXPIREAT is rewritten to ms; GT fails on b, which has no expiry.
		{[]string{"HEXPIREAT", "h", atS, "GT", "FIELDS", "2", "a", "b"}, "*2\r\n:1\r\n:0\r\n", ev("hexpire", "h"),
			[]string{"0:HPEXPIREAT h " + atS + "000 GT FIELDS 1 a"}, 1},
		// A time already past deletes the fields: "hdel", each field's HDEL, no HPEXPIREAT.
		{[]string{"HPEXPIREAT", "h", "1", "FIELDS", "2", "b", "c"}, "*2\r\n:2\r\n:2\r\n", ev("hdel", "h"),
			[]string{"0:MULTI", "0:HDEL h b", "0:HDEL h c", "0:EXEC"}, 2},
		// Deleting the last field: "hdel" then "del".
		{[]string{"HEXPIRE", "h", "0", "FIELDS", "1", "a"}, "*1\r\n:2\r\n", evs(ev("hdel", "h"), ev("del", "h")),
			[]string{"0:HDEL h a"}, 1},
		{[]string{"EXISTS", "h"}, ":0\r\n", nil, nil, 0},
		// No key, errors: nothing.
		{[]string{"HEXPIRE", "h", "100", "FIELDS", "1", "a"}, "*1\r\n:-2\r\n", nil, nil, 0},
		{[]string{"HSET", "h2", "a", "1", "b", "2"}, ":2\r\n", ev("hset", "h2"), []string{"0:HSET h2 a 1 b 2"}, 2},
		{[]string{"HEXPIRE", "h2", "-1", "FIELDS", "1", "a"}, "", nil, nil, 0},
		{[]string{"HEXPIRE", "h2", "100", "FIELDS", "2", "a"}, "", nil, nil, 0},
		// HPERSIST: one "hpersist" and one change however many fields, replicated as itself.
		{[]string{"HPEXPIRE", "h2", "100000", "FIELDS", "2", "a", "b"}, "*2\r\n:1\r\n:1\r\n", ev("hexpire", "h2"),
			[]string{"0:HPEXPIREAT h2 ~" + msFromNow(100*time.Second) + " FIELDS 2 a b"}, 2},
		{[]string{"HPERSIST", "h2", "FIELDS", "3", "a", "b", "nope"}, "*3\r\n:1\r\n:1\r\n:-2\r\n", ev("hpersist", "h2"),
			[]string{"0:HPERSIST h2 FIELDS 3 a b nope"}, 1},
		{[]string{"HPERSIST", "h2", "FIELDS", "1", "a"}, "*1\r\n:-1\r\n", nil, nil, 0},
		{[]string{"HPERSIST", "nokey", "FIELDS", "1", "a"}, "*1\r\n:-2\r\n", nil, nil, 0},
	})
}

// A command that meets expired fields reclaims them first: their HDELs are replicated before the
// command's own form, in one MULTI/EXEC with it when there are several (Redis's alsoPropagate), "hexpired" (and "del" for a hash left empty) before the command's events,
// and nothing is counted for them.
func TestHashFieldLazyExpiryEffects(t *testing.T) {
	x := newHashFx(t)
	x.check([]hashEffect{
		{[]string{"HSET", "h", "a", "1", "b", "2", "c", "3"}, ":3\r\n", ev("hset", "h"),
			[]string{"0:HSET h a 1 b 2 c 3"}, 3},
		{[]string{"HPEXPIRE", "h", "1", "FIELDS", "2", "a", "b"}, "*2\r\n:1\r\n:1\r\n", ev("hexpire", "h"),
			[]string{"0:HPEXPIREAT h ~" + msFromNow(0) + " FIELDS 2 a b"}, 2},
	})
	time.Sleep(5 * time.Millisecond)
	x.check([]hashEffect{
		{[]string{"HGET", "h", "a"}, "$-1\r\n", ev("hexpired", "h"),
			[]string{"0:MULTI", "0:HDEL h a", "0:HDEL h b", "0:EXEC"}, 0},
		{[]string{"HLEN", "h"}, ":1\r\n", nil, nil, 0},
		{[]string{"HPEXPIRE", "h", "1", "FIELDS", "1", "c"}, "*1\r\n:1\r\n", ev("hexpire", "h"),
			[]string{"0:HPEXPIREAT h ~" + msFromNow(0) + " FIELDS 1 c"}, 1},
	})
	time.Sleep(5 * time.Millisecond)
	x.check([]hashEffect{
		// The last field expired: the hash is deleted, then HSET creates it again.
		{[]string{"HSET", "h", "d", "4"}, ":1\r\n", evs(ev("hexpired", "h"), ev("del", "h"), ev("hset", "h")),
			[]string{"0:MULTI", "0:HDEL h c", "0:HSET h d 4", "0:EXEC"}, 1},
		// In another database, events and HDELs name it.
		{[]string{"SELECT", "3"}, "+OK\r\n", nil, nil, 0},
		{[]string{"HSET", "k", "a", "1", "b", "2"}, ":2\r\n",
			[]string{"__keyspace@3__:k hset", "__keyevent@3__:hset k"}, []string{"3:HSET k a 1 b 2"}, 2},
		{[]string{"HPEXPIRE", "k", "1", "FIELDS", "1", "a"}, "*1\r\n:1\r\n",
			[]string{"__keyspace@3__:k hexpire", "__keyevent@3__:hexpire k"},
			[]string{"3:HPEXPIREAT k ~" + msFromNow(0) + " FIELDS 1 a"}, 1},
	})
	time.Sleep(5 * time.Millisecond)
	x.check([]hashEffect{
		{[]string{"HDEL", "k", "a", "b"}, ":1\r\n",
			[]string{"__keyspace@3__:k hexpired", "__keyevent@3__:hexpired k",
				"__keyspace@3__:k hdel", "__keyevent@3__:hdel k", "__keyspace@3__:k del", "__keyevent@3__:del k"},
			[]string{"3:MULTI", "3:HDEL k a", "3:HDEL k a b", "3:EXEC"}, 1},
	})
}

// The active cycle reclaims the fields of hashes no command touches, reporting as a command's
// reclaim does, under the hash's database; a large hash's fields each get their HDEL.
func TestHashFieldActiveExpiryEffects(t *testing.T) {
	x := newHashFx(t)
	big := []string{"HSET", "big"}
	var bigFields, bigHdels []string
	for i := range 200 {
		f := "f" + strconv.Itoa(i)
		big = append(big, f, "v")
		if i%2 == 0 {
			bigFields = append(bigFields, f)
			bigHdels = append(bigHdels, "5:HDEL big "+f)
		}
	}
	x.tc.do("SELECT", "5")
	x.tc.do(big...)
	x.tc.do(slices.Concat([]string{"HPEXPIRE", "big", "20", "FIELDS", strconv.Itoa(len(bigFields))}, bigFields)...)
	x.tc.do("HSET", "h", "a", "1", "b", "2")
	x.tc.do("HPEXPIRE", "h", "20", "FIELDS", "1", "a")
	x.events()
	x.feed()
	before := x.dirty()
	time.Sleep(40 * time.Millisecond)
	x.e.ActiveExpire(time.Second)
	got, feedGot := x.events(), x.feed()
	slices.Sort(got)
	want := []string{"__keyevent@5__:hexpired big", "__keyevent@5__:hexpired h",
		"__keyspace@5__:big hexpired", "__keyspace@5__:h hexpired"}
	if !slices.Equal(got, want) {
		t.Errorf("active expiry raised %q, want %q", got, want)
	}
	slices.Sort(feedGot)
	wantFeed := slices.Concat(bigHdels, []string{"5:HDEL h a"})
	slices.Sort(wantFeed)
	if !slices.Equal(feedGot, wantFeed) {
		t.Errorf("active expiry replicated %d commands %q, want %d", len(feedGot), feedGot, len(wantFeed))
	}
	if d := x.dirty() - before; d != 0 {
		t.Errorf("active expiry counted %d changes", d)
	}
	if r := x.tc.do("HLEN", "big"); r != ":100\r\n" {
		t.Errorf("HLEN big = %q after the cycle", r)
	}
	// The last field: "hexpired" then "del", and the key is gone.
	x.tc.do("HPEXPIRE", "h", "20", "FIELDS", "1", "b")
	x.events()
	x.feed()
	time.Sleep(40 * time.Millisecond)
	x.e.ActiveExpire(time.Second)
	wantEvs := []string{"__keyspace@5__:h hexpired", "__keyevent@5__:hexpired h",
		"__keyspace@5__:h del", "__keyevent@5__:del h"}
	if got := x.events(); !slices.Equal(got, wantEvs) {
		t.Errorf("active expiry of the last field raised %q, want %q", got, wantEvs)
	}
	if got := x.feed(); !slices.Equal(got, []string{"5:HDEL h b"}) {
		t.Errorf("active expiry of the last field replicated %q", got)
	}
	if r := x.tc.do("EXISTS", "h"); r != ":0\r\n" {
		t.Errorf("EXISTS h = %q after its last field expired", r)
	}
}
