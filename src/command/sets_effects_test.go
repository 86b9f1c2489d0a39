package command

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hotkv/hotkv/net/resp/resptest"
	"github.com/hotkv/hotkv/pipeline/feed"
)

// What SPOP with a count below the set's size pops is random, so the effects differential
// cannot generate it (Redis and HotKV pop different members); here the replicated form is checked
// against the reply instead: one SREM per member popped, in the reply's order, wrapped in
// MULTI/EXEC when there are several, and the dirty count grows by the count. Sizes cover the
// small encodings and both of Redis's strategies (count small, and count close to the size).
func TestSpopCountPropagatesSrem(t *testing.T) {
	for _, tt := range []struct{ size, count int }{
		{3, 1}, {3, 2}, {20, 5}, {20, 19}, {600, 7}, {600, 550},
	} {
		e := newTestEngine()
		tc := newTestConn(t, e)
		add := []string{"SADD", "k"}
		for i := range tt.size {
			if i%2 == 0 {
				add = append(add, strconv.Itoa(i))
			} else {
				add = append(add, "m"+strconv.Itoa(i))
			}
		}
		tc.do(add...)
		rd := e.AttachFeed()
		before := dirtyOf(t, tc)
		popped := replyStrings(t, tc.do("SPOP", "k", strconv.Itoa(tt.count)))
		if len(popped) != tt.count {
			t.Fatalf("SPOP k %d of %d popped %d", tt.count, tt.size, len(popped))
		}
		if d := dirtyOf(t, tc) - before; d != int64(tt.count) {
			t.Errorf("SPOP k %d of %d: dirty grew by %d", tt.count, tt.size, d)
		}
		var want [][]string
		if tt.count > 1 {
			want = append(want, []string{"MULTI"})
		}
		for _, m := range popped {
			want = append(want, []string{"SREM", "k", m})
		}
		if tt.count > 1 {
			want = append(want, []string{"EXEC"})
		}
		got := feedCommands(t, rd)
		if !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("SPOP k %d of %d propagated %q, want %q", tt.count, tt.size, trimCmds(got), trimCmds(want))
		}
		if n := tc.do("SCARD", "k"); n != ":"+strconv.Itoa(tt.size-tt.count)+"\r\n" {
			t.Errorf("SPOP k %d of %d left %q members", tt.count, tt.size, n)
		}
		rd.Close()
	}
}

// SPOP without a count is SREM of the member it replied; with a count reaching the size it is DEL
// and counts every member; the STORE commands propagate as themselves once they changed
// something, and not at all when they deleted nothing. Each step runs on a connection of its own
// (keys fall on random shards, so a multi-key step may run as a barrier on the connection's Ctx)
// and INFO on another.
func TestSetsPropagation(t *testing.T) {
	e := newTestEngine()
	info := newTestConn(t, e)
	rd := e.AttachFeed()
	defer rd.Close()
	steps := []struct {
		cmd   []string
		want  [][]string // nil: the command itself
		dirty int64
	}{
		{[]string{"SADD", "k", "a", "b", "a"}, nil, 2},
		{[]string{"SADD", "k", "a"}, [][]string{}, 0},
		{[]string{"SPOP", "k"}, [][]string{{"SREM", "k", "?"}}, 1},
		{[]string{"SPOP", "k", "5"}, [][]string{{"DEL", "k"}}, 1},
		{[]string{"SPOP", "k"}, [][]string{}, 0},
		{[]string{"SPOP", "k", "5"}, [][]string{}, 0},
		{[]string{"SADD", "{x}a", "1", "2"}, nil, 2},
		{[]string{"SADD", "{x}b", "2", "3"}, nil, 2},
		{[]string{"SMOVE", "{x}a", "{x}b", "2"}, nil, 1},
		{[]string{"SMOVE", "{x}a", "{x}b", "1"}, nil, 2},
		{[]string{"SMOVE", "{x}a", "{x}b", "1"}, [][]string{}, 0},
		{[]string{"SINTERSTORE", "d", "{x}b", "nosuch"}, [][]string{}, 0},
		{[]string{"SUNIONSTORE", "d", "{x}b"}, nil, 1},
		{[]string{"SINTERSTORE", "d", "{x}b", "nosuch"}, nil, 1},
		{[]string{"SDIFFSTORE", "d", "{x}b", "{x}b"}, [][]string{}, 0},
		{[]string{"SREM", "{x}b", "1", "2", "3", "9"}, nil, 3},
		{[]string{"SREM", "{x}b", "1"}, [][]string{}, 0},
		{[]string{"SINTERCARD", "1", "{x}b"}, [][]string{}, 0},
	}
	for _, s := range steps {
		before := dirtyOf(t, info)
		reply := newTestConn(t, e).do(s.cmd...)
		if d := dirtyOf(t, info) - before; d != s.dirty {
			t.Errorf("%q: dirty grew by %d, want %d", s.cmd, d, s.dirty)
		}
		want := s.want
		if want == nil {
			want = [][]string{s.cmd}
		}
		got := feedCommands(t, rd)
		if len(want) == 1 && len(want[0]) == 3 && want[0][2] == "?" { // the member SPOP replied
			want = [][]string{{"SREM", "k", replyText(t, reply)}}
		}
		if !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("%q propagated %q, want %q", s.cmd, got, want)
		}
	}
}

// feedCommands returns the commands the feed holds now, one entry's MULTI/EXEC included.
func feedCommands(t *testing.T, rd *feed.Reader) [][]string {
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
		for _, en := range es {
			vs, err := resptest.ParseAll(en.Cmd)
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

// dirtyOf reads INFO's rdb_changes_since_last_save.
func dirtyOf(t *testing.T, tc *testConn) int64 {
	t.Helper()
	for _, line := range strings.Split(replyText(t, tc.do("INFO", "persistence")), "\r\n") {
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

// trimCmds shortens a long command list for a failure message.
func trimCmds(c [][]string) [][]string {
	if len(c) > 12 {
		return append(c[:6:6], append([][]string{{"…"}}, c[len(c)-6:]...)...)
	}
	return c
}
