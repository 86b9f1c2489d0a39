package command

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/net/resp/resptest"
	"github.com/hotkv/hotkv/src/acl"
	"github.com/hotkv/hotkv/src/command/meta"
)

// pipelined sends every command to redis-server at once and reads the replies.
func pipelined(t *testing.T, rw *bufio.ReadWriter, cmds [][]string) []string {
	t.Helper()
	// The writer's Flush can return after the last reply was read, so the
	// next call's writer would race with this one on rw.Writer: wait for it.
	written := make(chan struct{})
	go func() {
		defer close(written)
		for _, c := range cmds {
			rw.Write(encodeCommand(c))
		}
		rw.Flush()
	}()
	defer func() { <-written }()
	out := make([]string, len(cmds))
	for i := range cmds {
		raw, err := resptest.ReadRaw(rw.Reader)
		if err != nil {
			t.Fatalf("redis reply %d: %v", i, err)
		}
		out[i] = string(raw)
	}
	return out
}

func redisConn(t *testing.T, addr string) *bufio.ReadWriter {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(5 * time.Minute))
	return bufio.NewReadWriter(bufio.NewReader(c), bufio.NewWriter(c))
}

// matrixArgs is a call of a command with as many arguments as its arity asks (one more for a
// variadic one), each a different key-like word.
func matrixArgs(name string, arity int) []string {
	parts := strings.SplitN(name, "|", 2)
	args := slices.Clone(parts)
	for i := len(args); i < max(arity, -arity+1); i++ {
		args = append(args, fmt.Sprintf("k%d", i))
	}
	return args
}

// The permission matrix: every Redis 7.0.15 command and subcommand HotKV has, checked (ACL
// DRYRUN, the route stage's check) for 42 users, each lacking one category (+@all -@cat) or
// having only one (-@all +@cat): HotKV must refuse exactly what Redis refuses, with the same
// reply.
func TestACLPermissionMatrixAgainstRedis(t *testing.T) {
	addr, stop := startRedisAddr(t)
	t.Cleanup(stop)
	rw := redisConn(t, addr)
	e := newTestEngine()
	tc := newTestConn(t, e)
	var setup [][]string
	for _, cat := range acl.Categories {
		setup = append(setup, []string{"ACL", "SETUSER", "no_" + cat, "on", "nopass", "~*", "&*", "+@all", "-@" + cat},
			[]string{"ACL", "SETUSER", "only_" + cat, "on", "nopass", "~*", "&*", "-@all", "+@" + cat})
	}
	var cmds [][]string
	var names []string
	missing := 0
	for _, top := range meta.Names() {
		m := meta.Lookup(top)
		list := []*meta.Command{m}
		for _, sub := range m.Subs {
			list = append(list, meta.Lookup(sub))
		}
		for _, c := range list {
			if len(c.Subs) > 0 {
				continue // a container runs as one of its subcommands
			}
			if findCommand([]byte(c.Name)) == nil {
				missing++
				continue
			}
			names = append(names, c.Name)
			args := matrixArgs(c.Name, c.Arity)
			for _, cat := range acl.Categories {
				cmds = append(cmds, append([]string{"ACL", "DRYRUN", "no_" + cat}, args...),
					append([]string{"ACL", "DRYRUN", "only_" + cat}, args...))
			}
		}
	}
	all := append(setup, cmds...)
	want := pipelined(t, rw, all)
	var b strings.Builder
	for _, c := range all {
		b.Write(encodeCommand(c))
	}
	out, err := tc.send([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	got := splitReplies(t, out)
	if len(got) != len(want) {
		t.Fatalf("%d replies from HotKV, %d from Redis", len(got), len(want))
	}
	denied, mismatches := 0, 0
	for i := range all {
		if strings.HasPrefix(want[i], "$") {
			denied++
		}
		if got[i] != want[i] {
			mismatches++
			if mismatches <= 20 {
				t.Errorf("%q:\nhotkv: %q\nredis: %q", all[i], got[i], want[i])
			}
		}
	}
	t.Logf("permission matrix: %d commands (%d of Redis's not in HotKV), %d checks, %d refused by Redis, %d mismatches",
		len(names), missing, len(cmds), denied, mismatches)
}

// Random users (key patterns with %R~/%W~/~, channel patterns, selectors, command rules) and
// random commands naming random keys and channels: ACL DRYRUN's verdict, which names the key or
// channel refused, equal on both servers.
func TestACLRandomUsersAgainstRedis(t *testing.T) {
	addr, stop := startRedisAddr(t)
	t.Cleanup(stop)
	rw := redisConn(t, addr)
	tc := newTestConn(t, newTestEngine())
	rng := rand.New(rand.NewPCG(19, 7))
	pick := func(xs []string) string { return xs[rng.IntN(len(xs))] }
	keys := []string{"a", "b", "ab", "ba", "x:1", "x:2", "y", "[", "a*"}
	chans := []string{"c1", "c2", "news.x", "n", "c*"}
	keyPats := []string{"a*", "b", "*", "x:*", "?", "[ab]*", "y", "a\\*", "*b"}
	chanPats := []string{"c*", "news.*", "c1", "*", "n"}
	rules := []string{"+@all", "-@all +@read", "-@all +@write", "-@all +@read +@write", "+@all -@write",
		"-@all +get +set +mget", "-@all +@string +@list", "+@all -@keyspace", "-@all +@pubsub", "-@all +@scripting +@read"}
	selector := func() string {
		var ops []string
		for range rng.IntN(4) {
			ops = append(ops, pick([]string{"~", "%R~", "%W~", "%RW~"})+pick(keyPats))
		}
		if rng.IntN(6) == 0 {
			ops = append(ops, "allkeys")
		}
		for range rng.IntN(3) {
			ops = append(ops, "&"+pick(chanPats))
		}
		ops = append(ops, strings.Fields(pick(rules))...)
		return strings.Join(ops, " ")
	}
	k := func() string { return pick(keys) }
	ch := func() string { return pick(chans) }
	calls := []func() []string{
		func() []string { return []string{"GET", k()} },
		func() []string { return []string{"SET", k(), "v"} },
		func() []string { return []string{"SET", k(), "v", "GET"} },
		func() []string { return []string{"MGET", k(), k(), k()} },
		func() []string { return []string{"MSET", k(), "1", k(), "2"} },
		func() []string { return []string{"DEL", k(), k()} },
		func() []string { return []string{"EXISTS", k()} },
		func() []string { return []string{"APPEND", k(), "x"} },
		func() []string { return []string{"HSET", k(), "f", "v"} },
		func() []string { return []string{"LRANGE", k(), "0", "1"} },
		func() []string { return []string{"SINTERSTORE", k(), k(), k()} },
		func() []string { return []string{"RENAME", k(), k()} },
		func() []string { return []string{"COPY", k(), k()} },
		func() []string { return []string{"LMOVE", k(), k(), "LEFT", "RIGHT"} },
		func() []string { return []string{"SORT", k()} },
		func() []string { return []string{"SORT", k(), "STORE", k()} },
		func() []string { return []string{"SORT_RO", k()} },
		func() []string { return []string{"EVAL", "return 1", "2", k(), k()} },
		func() []string { return []string{"GETDEL", k()} },
		func() []string { return []string{"TYPE", k()} },
		func() []string { return []string{"EXPIRE", k(), "10"} },
		func() []string { return []string{"OBJECT", "ENCODING", k()} },
		func() []string { return []string{"BITFIELD", k(), "GET", "u8", "0"} },
		func() []string { return []string{"BITFIELD", k(), "SET", "u8", "0", "1"} },
		func() []string { return []string{"BITOP", "AND", k(), k(), k()} },
		func() []string { return []string{"PFMERGE", k(), k()} },
		func() []string { return []string{"XADD", k(), "*", "f", "v"} },
		func() []string { return []string{"XREAD", "STREAMS", k(), k(), "0", "0"} },
		func() []string { return []string{"BLPOP", k(), k(), "0"} },
		func() []string { return []string{"LCS", k(), k()} },
		func() []string { return []string{"ZUNIONSTORE", k(), "2", k(), k()} },
		func() []string {
			return []string{"GEOSEARCHSTORE", k(), k(), "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km", "ASC"}
		},
		func() []string { return []string{"PUBLISH", ch(), "m"} },
		func() []string { return []string{"SUBSCRIBE", ch(), ch()} },
		func() []string { return []string{"PSUBSCRIBE", ch(), ch()} },
		func() []string { return []string{"SSUBSCRIBE", ch()} },
		func() []string { return []string{"SPUBLISH", ch(), "m"} },
		func() []string { return []string{"UNSUBSCRIBE", ch()} },
		func() []string { return []string{"PUBSUB", "NUMSUB", ch()} },
	}
	var all [][]string
	const users = 1000
	for u := range users {
		name := fmt.Sprintf("r%d", u)
		cmd := append([]string{"ACL", "SETUSER", name, "on", "nopass"}, strings.Fields(selector())...)
		for range rng.IntN(3) {
			cmd = append(cmd, "("+selector()+")")
		}
		all = append(all, cmd, []string{"ACL", "GETUSER", name})
		for range 30 {
			all = append(all, append([]string{"ACL", "DRYRUN", name}, calls[rng.IntN(len(calls))]()...))
		}
	}
	want := pipelined(t, rw, all)
	var b strings.Builder
	for _, c := range all {
		b.Write(encodeCommand(c))
	}
	out, err := tc.send([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	got := splitReplies(t, out)
	denied, mismatches, checks := 0, 0, 0
	for i := range all {
		if all[i][1] == "DRYRUN" {
			checks++
			if strings.HasPrefix(want[i], "$") {
				denied++
			}
		}
		g, w := aclNorm(t, got[i], all[i]), aclNorm(t, want[i], all[i])
		if g != w {
			mismatches++
			if mismatches <= 20 {
				t.Errorf("%q:\nhotkv: %s\nredis: %s", all[i], g, w)
			}
		}
	}
	t.Logf("random users: %d users, %d checks, %d refused by Redis, %d mismatches", users, checks, denied, mismatches)
}

// The matrix run for real: a client logged in as a user lacking one category sends every
// command of the data categories (not @dangerous, @blocking, @admin, @pubsub, @connection,
// @transaction or @scripting, which would stop, block or reconfigure the servers); HotKV
// refuses with NOPERM exactly the calls Redis refuses, in the same words.
func TestACLPermissionMatrixRunAgainstRedis(t *testing.T) {
	addr, stop := startRedisAddr(t)
	t.Cleanup(stop)
	rw := redisConn(t, addr)
	e := newTestEngine()
	admin := newTestConn(t, e)
	unsafe := []string{"@dangerous", "@blocking", "@admin", "@pubsub", "@connection", "@transaction", "@scripting"}
	var calls [][]string
	for _, top := range meta.Names() {
		m := meta.Lookup(top)
		list := []*meta.Command{m}
		for _, sub := range m.Subs {
			list = append(list, meta.Lookup(sub))
		}
		for _, c := range list {
			if len(c.Subs) > 0 || findCommand([]byte(c.Name)) == nil ||
				slices.ContainsFunc(c.ACL, func(cat string) bool { return slices.Contains(unsafe, cat) }) {
				continue
			}
			calls = append(calls, matrixArgs(c.Name, c.Arity))
		}
	}
	checks, refused, mismatches := 0, 0, 0
	for _, cat := range acl.Categories {
		if slices.Contains(unsafe, "@"+cat) {
			continue
		}
		user := []string{"ACL", "SETUSER", "no_" + cat, "on", "nopass", "~*", "&*", "+@all", "-@" + cat}
		cmds := append([][]string{user, {"AUTH", "no_" + cat, "x"}}, calls...)
		cmds = append(cmds, []string{"AUTH", "default", "x"})
		want := pipelined(t, rw, cmds)
		admin.do(user...)
		tc := newTestConn(t, e)
		for i, c := range cmds[1 : len(cmds)-1] {
			got, w := tc.do(c...), want[i+1]
			checks++
			isNo := strings.HasPrefix(w, "-NOPERM")
			if isNo {
				refused++
			}
			if isNo != strings.HasPrefix(got, "-NOPERM") || (isNo && got != w) {
				mismatches++
				if mismatches <= 20 {
					t.Errorf("no_%s %q:\nhotkv: %q\nredis: %q", cat, c, got, w)
				}
			}
		}
	}
	t.Logf("permission matrix run: %d commands, %d calls, %d refused by Redis, %d mismatches", len(calls), checks, refused, mismatches)
}

// With requirepass set, an unauthenticated client gets NOAUTH for every command of the table
// but AUTH, HELLO, QUIT and RESET, as from Redis.
func TestACLNoAuthAgainstRedis(t *testing.T) {
	addr, stop := startRedisAddr(t)
	t.Cleanup(stop)
	rw := redisConn(t, addr)
	e := newTestEngine()
	admin := newTestConn(t, e)
	st := e.Config.(testStore)
	st.OnChange("requirepass", func(string) {
		s := *e.Settings()
		s.RequirePass = st.String("requirepass")
		e.SetSettings(s)
	})
	pipelined(t, rw, [][]string{{"CONFIG", "SET", "requirepass", "pw"}})
	admin.do("CONFIG", "SET", "requirepass", "pw")
	rw2 := redisConn(t, addr)
	tc := newTestConn(t, e)
	var calls [][]string
	for _, top := range meta.Names() {
		m := meta.Lookup(top)
		list := []*meta.Command{m}
		for _, sub := range m.Subs {
			list = append(list, meta.Lookup(sub))
		}
		for _, c := range list {
			if len(c.Subs) > 0 || findCommand([]byte(c.Name)) == nil || c.Name == "quit" || c.Name == "reset" {
				continue
			}
			calls = append(calls, matrixArgs(c.Name, c.Arity))
		}
	}
	want := pipelined(t, rw2, calls)
	noauth, mismatches := 0, 0
	var allowed []string
	for i, c := range calls {
		got := tc.do(c...)
		if strings.HasPrefix(want[i], "-NOAUTH") {
			noauth++
		} else {
			allowed = append(allowed, c[0])
		}
		if strings.HasPrefix(got, "-NOAUTH") != strings.HasPrefix(want[i], "-NOAUTH") {
			mismatches++
			t.Errorf("%q unauthenticated:\nhotkv: %q\nredis: %q", c, got, want[i])
		}
	}
	t.Logf("unauthenticated: %d commands, %d NOAUTH on Redis, not refused: %v, %d mismatches", len(calls), noauth, allowed, mismatches)
	if got := tc.do("RESET"); got != "+RESET\r\n" {
		t.Errorf("RESET unauthenticated: %q", got)
	}
}
