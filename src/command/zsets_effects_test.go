package command

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/net/resp/resptest"
	"github.com/hotkv/hotkv/pipeline/feed"
)

// Effects of the sorted-set commands and SORT ... STORE that the effects differential cannot
// reach: it runs one connection, so a blocked pop is never served by another client's write.
// The expected replicated forms, dirty counts and events are redis-server 7.0.15's (its AOF,
// INFO and a __key*__:* subscriber for the same commands).

// zFeedCommands returns the commands the feed holds, each as its arguments.
func zFeedCommands(t *testing.T, rd *feed.Reader) [][]string {
	t.Helper()
	var out [][]string
	for {
		es, err := rd.Next()
		if err != nil {
			t.Fatal(err)
		}
		if len(es) == 0 {
			return out
		}
		for _, e := range es {
			vs, err := resptest.ParseAll(e.Cmd)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range vs {
				args, err := v.Strings()
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, args)
			}
		}
	}
}

// zDirty reads INFO's rdb_changes_since_last_save on a connection of its own, which runs
// nothing else.
func zDirty(t *testing.T, tc *testConn) int64 {
	t.Helper()
	text := replyText(t, tc.do("INFO", "persistence"))
	for _, line := range strings.Split(text, "\r\n") {
		if v, ok := strings.CutPrefix(line, "rdb_changes_since_last_save:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("INFO persistence has no rdb_changes_since_last_save")
	return 0
}

// zEvents returns the keyspace notifications queued for sub (subscribed to __keyspace@*), each
// as "key event".
func zEvents(t *testing.T, sub *testConn) []string {
	t.Helper()
	out, _ := sub.send(nil)
	var evs []string
	for _, raw := range splitReplies(t, out) {
		msg := replyStrings(t, raw)
		if len(msg) != 4 || msg[0] != "pmessage" {
			t.Fatalf("subscriber got %q", msg)
		}
		evs = append(evs, strings.TrimPrefix(msg[2], "__keyspace@0__:")+" "+msg[3])
	}
	return evs
}

// newZEffects returns an engine with keyspace notifications on (class K and every type), a
// subscriber to __keyspace@0__:*, and a connection to write with.
func newZEffects(t *testing.T) (*Engine, *testConn, *testConn) {
	e := newTestEngine()
	sub, a := newTestConn(t, e), newTestConn(t, e)
	sub.do("PSUBSCRIBE", "__keyspace@0__:*")
	if got := a.do("CONFIG", "SET", "notify-keyspace-events", "KA"); got != "+OK\r\n" {
		t.Fatalf("CONFIG SET: %q", got)
	}
	return e, sub, a
}

func sameCommands(got, want [][]string) bool { return slices.EqualFunc(got, want, slices.Equal) }

// Blocked pops served by a later write: replicated as ZPOPMIN/ZPOPMAX key (BZPOPMIN, BZPOPMAX)
// or with the number popped (BZMPOP, with or without COUNT), after the write that served them;
// one change per member popped; their events after the write's, "del" when they emptied the key.
func TestZSetServedPopEffects(t *testing.T) {
	e, sub, a := newZEffects(t)
	ws := zConns(t, e, 4)
	c1 := blockedDo(t, ws[0], "BZPOPMIN", "q", "0")
	c2 := blockedDo(t, ws[1], "BZMPOP", "0", "2", "other", "q", "MAX", "COUNT", "2")
	c3 := blockedDo(t, ws[2], "BZMPOP", "0", "1", "q", "MIN")
	c4 := blockedDo(t, ws[3], "BZMPOP", "0", "1", "q2", "MIN", "COUNT", "10")
	rd := e.AttachFeed()
	defer rd.Close()
	info := newTestConn(t, e)
	before := zDirty(t, info)
	a.do("ZADD", "q", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e")
	for _, ch := range []<-chan string{c1, c2, c3} {
		recv(t, ch)
	}
	a.do("ZUNIONSTORE", "q2", "1", "q") // creates q2 {c}, which c4 takes whole
	if got, want := recv(t, c4), "*2\r\n$2\r\nq2\r\n*1\r\n*2\r\n$1\r\nc\r\n$1\r\n3\r\n"; got != want {
		t.Fatalf("BZMPOP on q2: %q, want %q", got, want)
	}
	want := [][]string{
		{"ZADD", "q", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e"},
		{"ZPOPMIN", "q"},
		{"ZPOPMAX", "q", "2"},
		{"ZPOPMIN", "q", "1"},
		{"ZUNIONSTORE", "q2", "1", "q"},
		{"ZPOPMIN", "q2", "1"},
	}
	if got := zFeedCommands(t, rd); !sameCommands(got, want) {
		t.Errorf("feed %q, want %q", got, want)
	}
	if d := zDirty(t, info) - before; d != 5+1+2+1+1+1 {
		t.Errorf("dirty grew by %d, want 11", d)
	}
	wantEv := []string{"q zadd", "q zpopmin", "q zpopmax", "q zpopmin", "q2 zunionstore", "q2 zpopmin", "q2 del"}
	if got := zEvents(t, sub); !slices.Equal(got, wantEv) {
		t.Errorf("events %q, want %q", got, wantEv)
	}
}

// A SORT ... STORE that creates a list a client waits on is replicated, and raises its event,
// before the served pop: Redis serves blocked clients after the command.
func TestSortStoreEffectsBeforeServedPop(t *testing.T) {
	e, sub, a := newZEffects(t)
	a.do("ZADD", "src", "1", "x", "2", "y")
	zEvents(t, sub)
	w := newTestConn(t, e)
	ch := blockedDo(t, w, "BLPOP", "dst", "0")
	rd := e.AttachFeed()
	defer rd.Close()
	if got := a.do("SORT", "src", "BY", "nosort", "STORE", "dst"); got != ":2\r\n" {
		t.Fatalf("SORT: %q", got)
	}
	if got := recv(t, ch); got != "*2\r\n$3\r\ndst\r\n$1\r\nx\r\n" {
		t.Fatalf("BLPOP: %q", got)
	}
	// What the served pop is replicated as (LPOP) is the lists family's; here it must follow.
	got := zFeedCommands(t, rd)
	if len(got) == 0 || !slices.Equal(got[0], []string{"SORT", "src", "BY", "nosort", "STORE", "dst"}) {
		t.Errorf("feed %q: want the SORT first, then the served pop", got)
	}
	if evs := zEvents(t, sub); len(evs) == 0 || evs[0] != "dst sortstore" {
		t.Errorf("events %q: want dst sortstore first", evs)
	}
}

// Each command, run once on a fresh set k = {a:1, b:2, c:3}: what it is replicated as and how
// many changes it counts.
func TestZSetCommandEffects(t *testing.T) {
	for _, tt := range []struct {
		cmd   []string
		feed  [][]string
		dirty int64
	}{
		{[]string{"BZPOPMIN", "k", "0"}, [][]string{{"ZPOPMIN", "k"}}, 1},
		{[]string{"BZPOPMAX", "nokey", "k", "0"}, [][]string{{"ZPOPMAX", "k"}}, 1},
		{[]string{"BZMPOP", "0", "1", "k", "MIN"}, [][]string{{"ZPOPMIN", "k", "1"}}, 1},
		{[]string{"BZMPOP", "0", "1", "k", "MAX", "COUNT", "10"}, [][]string{{"ZPOPMAX", "k", "3"}}, 3},
		{[]string{"ZMPOP", "2", "nokey", "k", "MIN", "COUNT", "2"}, [][]string{{"ZPOPMIN", "k", "2"}}, 2},
		{[]string{"ZMPOP", "1", "nokey", "MIN"}, nil, 0},
		{[]string{"ZPOPMIN", "k", "10"}, [][]string{{"ZPOPMIN", "k", "10"}}, 3},
		{[]string{"ZPOPMIN", "k", "0"}, nil, 0},
		{[]string{"ZADD", "k", "1", "a", "4", "d", "5", "b"}, [][]string{{"ZADD", "k", "1", "a", "4", "d", "5", "b"}}, 2},
		{[]string{"ZADD", "k", "1", "a"}, nil, 0},
		{[]string{"ZADD", "k", "INCR", "0", "a"}, nil, 0},
		{[]string{"ZINCRBY", "k", "inf", "a"}, [][]string{{"ZINCRBY", "k", "inf", "a"}}, 1},
		{[]string{"ZREM", "k", "a", "x", "b"}, [][]string{{"ZREM", "k", "a", "x", "b"}}, 2},
		{[]string{"ZREM", "k", "x"}, nil, 0},
		{[]string{"ZREMRANGEBYRANK", "k", "0", "-1"}, [][]string{{"ZREMRANGEBYRANK", "k", "0", "-1"}}, 3},
		{[]string{"ZREMRANGEBYSCORE", "k", "5", "6"}, nil, 0},
		{[]string{"ZUNIONSTORE", "d", "1", "nokey"}, nil, 0},
		{[]string{"ZUNIONSTORE", "k", "1", "nokey"}, [][]string{{"ZUNIONSTORE", "k", "1", "nokey"}}, 1},
		{[]string{"ZRANGESTORE", "k", "k", "0", "0"}, [][]string{{"ZRANGESTORE", "k", "k", "0", "0"}}, 1},
		{[]string{"SORT", "k", "BY", "nosort", "STORE", "l"}, [][]string{{"SORT", "k", "BY", "nosort", "STORE", "l"}}, 3},
		{[]string{"SORT", "nokey", "STORE", "k"}, [][]string{{"SORT", "nokey", "STORE", "k"}}, 1},
		{[]string{"SORT", "nokey", "STORE", "l"}, nil, 0},
	} {
		e := newTestEngine()
		a, info := newTestConn(t, e), newTestConn(t, e)
		a.do("ZADD", "k", "1", "a", "2", "b", "3", "c")
		rd := e.AttachFeed()
		before := zDirty(t, info)
		a.do(tt.cmd...)
		if got := zFeedCommands(t, rd); !sameCommands(got, tt.feed) {
			t.Errorf("%q propagated %q, want %q", tt.cmd, got, tt.feed)
		}
		if d := zDirty(t, info) - before; d != tt.dirty {
			t.Errorf("%q: dirty grew by %d, want %d", tt.cmd, d, tt.dirty)
		}
		rd.Close()
	}
}

// A STORE over a destination whose time has passed but that is still there (no command met it
// since): an empty result deletes it as Redis's dbDelete does, as a live key ("del", one change,
// the command replicated); a stored result first reclaims it as expired, as setKey's lookup does.
func TestZSetStoreOverExpiredDestination(t *testing.T) {
	for _, tt := range []struct {
		cmd    []string
		feed   [][]string // nil: not checked (the expired key's DEL comes first)
		events []string
	}{
		{[]string{"ZUNIONSTORE", "d", "1", "nokey"}, [][]string{{"ZUNIONSTORE", "d", "1", "nokey"}}, []string{"d del"}},
		{[]string{"ZRANGESTORE", "d", "nokey", "0", "-1"}, [][]string{{"ZRANGESTORE", "d", "nokey", "0", "-1"}}, []string{"d del"}},
		{[]string{"SORT", "nokey", "STORE", "d"}, [][]string{{"SORT", "nokey", "STORE", "d"}}, []string{"d del"}},
		{[]string{"ZUNIONSTORE", "d", "1", "s"}, nil, []string{"d expired", "d zunionstore"}},
		{[]string{"SORT", "s", "STORE", "d"}, nil, []string{"d expired", "d sortstore"}},
	} {
		e, sub, a := newZEffects(t)
		info := newTestConn(t, e)
		a.do("ZADD", "s", "1", "1")
		a.do("ZADD", "d", "1", "a")
		a.do("PEXPIRE", "d", "1")
		time.Sleep(5 * time.Millisecond)
		zEvents(t, sub)
		rd := e.AttachFeed()
		before := zDirty(t, info)
		a.do(tt.cmd...)
		if got := zFeedCommands(t, rd); tt.feed != nil && !sameCommands(got, tt.feed) {
			t.Errorf("%q propagated %q, want %q", tt.cmd, got, tt.feed)
		}
		if d := zDirty(t, info) - before; d != 1 {
			t.Errorf("%q: dirty grew by %d, want 1", tt.cmd, d)
		}
		if got := zEvents(t, sub); !slices.Equal(got, tt.events) {
			t.Errorf("%q: events %q, want %q", tt.cmd, got, tt.events)
		}
		rd.Close()
	}
}
