package command

import (
	"bufio"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/ds/keyspace"
	"github.com/hotkv/hotkv/ds/list"
	"github.com/hotkv/hotkv/net/resp/resptest"
)

// COPY duplicates a list through its Cloner: the copy is independent; TYPE and OBJECT ENCODING
// name it as Redis 7.0 does.
func TestListCopyTypeEncoding(t *testing.T) {
	tc := newTestConn(t, newTestEngine())
	tc.do("RPUSH", "a", "1", "two", strings.Repeat("x", 5000))
	if got := tc.do("COPY", "a", "b"); got != ":1\r\n" {
		t.Fatalf("COPY: %q", got)
	}
	tc.do("LSET", "b", "0", "changed")
	tc.do("RPOP", "a")
	if got := tc.do("LRANGE", "a", "0", "-1"); got != "*2\r\n$1\r\n1\r\n$3\r\ntwo\r\n" {
		t.Errorf("original: %q", got)
	}
	if got := tc.do("LINDEX", "b", "0"); got != "$7\r\nchanged\r\n" {
		t.Errorf("copy: %q", got)
	}
	if got := tc.do("LLEN", "b"); got != ":3\r\n" {
		t.Errorf("copy length: %q", got)
	}
	for _, k := range []string{"a", "b"} {
		if got := tc.do("TYPE", k); got != "+list\r\n" {
			t.Errorf("TYPE %s: %q", k, got)
		}
		if got := tc.do("OBJECT", "ENCODING", k); got != "$9\r\nquicklist\r\n" {
			t.Errorf("OBJECT ENCODING %s: %q", k, got)
		}
	}
}

// New lists take their node size from list-max-listpack-size at creation; the contents do not
// depend on it.
func TestListNodeSizeSetting(t *testing.T) {
	for _, fill := range []int64{-5, -1, 1, 2, 100} {
		e := newTestEngine()
		s := *e.Settings()
		s.ListMaxListpackSize = fill
		e.SetSettings(s)
		tc := newTestConn(t, e)
		var want []string
		for i := range 300 {
			v := strconv.Itoa(i) + strings.Repeat("p", i%70)
			tc.do("RPUSH", "l", v)
			want = append(want, v)
		}
		tc.do("LINSERT", "l", "BEFORE", want[150], "ins")
		want = slices.Insert(want, 150, "ins")
		if got := replyStrings(t, tc.do("LRANGE", "l", "0", "-1")); !slices.Equal(got, want) {
			t.Errorf("fill %d: contents differ", fill)
		}
	}
}

// A client blocked in one database is not served by a push to the same key in another.
func TestBlockPerDatabase(t *testing.T) {
	e := newTestEngine()
	cs := conns(t, e, 2)
	cs[0].do("SELECT", "1")
	ch := blockedDo(t, cs[0], "BLPOP", "k", "0")
	cs[1].do("RPUSH", "k", "db0")
	pending(t, ch)
	cs[1].do("SELECT", "1")
	cs[1].do("RPUSH", "k", "db1")
	if got := recv(t, ch); got != "*2\r\n$1\r\nk\r\n$3\r\ndb1\r\n" {
		t.Errorf("BLPOP in db 1: %q", got)
	}
	cs[1].do("SELECT", "0")
	if got := cs[1].do("LLEN", "k"); got != ":1\r\n" {
		t.Errorf("db 0 keeps its element: %q", got)
	}
}

// An expired list is gone for every list command; a push creates a new persistent list.
func TestListExpiry(t *testing.T) {
	e := newTestEngine()
	now := time.Now().UnixNano()
	ktPlant(e, 0, "l", keyspace.KindList, listOf("a", "b"), now-1)
	for _, tt := range [][]string{{"LLEN", "l", ":0\r\n"}, {"LPOP", "l", "$-1\r\n"},
		{"LINDEX", "l", "0", "$-1\r\n"}, {"RPUSHX", "l", "x", ":0\r\n"}, {"LPUSH", "l", "x", ":1\r\n"},
		{"TTL", "l", ":-1\r\n"}} {
		if got := ktCall(e, 0, now, tt[:len(tt)-1]...); got != tt[len(tt)-1] {
			t.Errorf("%q: %q", tt[:len(tt)-1], got)
		}
	}
}

func listOf(vals ...string) *list.List {
	l := list.New(-2)
	for _, v := range vals {
		l.PushBack([]byte(v))
	}
	return l
}

// HotKV and redis-server answer a random mix of list commands on a few keys byte for byte.
func TestListsAgainstRedis(t *testing.T) {
	conn, stop := startRedis(t)
	defer stop()
	r := bufio.NewReader(conn)
	tc := newTestConn(t, newTestEngine())
	rng := rand.New(rand.NewPCG(7, 11))
	for i := range 4000 {
		args := randListCommand(rng)
		conn.Write(encodeCommand(args))
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		want, err := resptest.ReadRaw(r)
		if err != nil {
			t.Fatalf("redis: %q: %v", args, err)
		}
		if got := tc.do(args...); got != string(want) {
			t.Fatalf("command %d %q:\n got %q\nwant %q", i, args, got, want)
		}
	}
}

// randListCommand draws a list command on keys k0..k2 (k3 is a string) with values that are
// short strings, integers, non-canonical integers and long strings.
func randListCommand(r *rand.Rand) []string {
	key := func() string { return "k" + strconv.Itoa(r.IntN(4)) }
	val := func() string {
		switch r.IntN(8) {
		case 0:
			return strconv.Itoa(r.IntN(10000) - 5000)
		case 1:
			return "0" + strconv.Itoa(r.IntN(3))
		case 2:
			return strings.Repeat("L", 60+r.IntN(100))
		case 3:
			return strconv.FormatInt(r.Int64(), 10)
		}
		return string(rune('a' + r.IntN(5)))
	}
	idx := func() string { return strconv.Itoa(r.IntN(30) - 15) }
	end := func() string { return []string{"LEFT", "RIGHT"}[r.IntN(2)] }
	vals := func() []string {
		out := []string{}
		for range 1 + r.IntN(12) {
			out = append(out, val())
		}
		return out
	}
	switch r.IntN(18) {
	case 0:
		return append([]string{"LPUSH", key()}, vals()...)
	case 1:
		return append([]string{"RPUSH", key()}, vals()...)
	case 2:
		return append([]string{[]string{"LPUSHX", "RPUSHX"}[r.IntN(2)], key()}, vals()...)
	case 3:
		if r.IntN(2) == 0 {
			return []string{"LPOP", key()}
		}
		return []string{"RPOP", key(), strconv.Itoa(r.IntN(5))}
	case 4:
		return []string{"LRANGE", key(), idx(), idx()}
	case 5:
		return []string{"LINDEX", key(), idx()}
	case 6:
		return []string{"LSET", key(), idx(), val()}
	case 7:
		return []string{"LINSERT", key(), []string{"BEFORE", "AFTER"}[r.IntN(2)], val(), val()}
	case 8:
		return []string{"LREM", key(), strconv.Itoa(r.IntN(7) - 3), val()}
	case 9:
		return []string{"LTRIM", key(), idx(), idx()}
	case 10:
		cmd := []string{"LPOS", key(), val()}
		if r.IntN(2) == 0 {
			cmd = append(cmd, "RANK", strconv.Itoa(r.IntN(7)-3))
		}
		if r.IntN(2) == 0 {
			cmd = append(cmd, "COUNT", strconv.Itoa(r.IntN(4)))
		}
		if r.IntN(2) == 0 {
			cmd = append(cmd, "MAXLEN", strconv.Itoa(r.IntN(20)))
		}
		return cmd
	case 11:
		return []string{"LMOVE", key(), key(), end(), end()}
	case 12:
		return []string{"RPOPLPUSH", key(), key()}
	case 13:
		return []string{"LMPOP", "2", key(), key(), end(), "COUNT", strconv.Itoa(1 + r.IntN(4))}
	case 14:
		return []string{"BLPOP", key(), key(), "0.001"}
	case 15:
		return []string{"BLMOVE", key(), key(), end(), end(), "0.001"}
	case 16:
		return []string{"LLEN", key()}
	}
	return []string{"SET", "k3", "string"}
}
