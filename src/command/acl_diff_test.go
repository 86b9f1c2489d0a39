package command

import (
	"sort"
	"strings"
	"testing"
	"time"
)

// The ACL subcommands against redis-server 7.0.15 in RESP2 and RESP3: every reply equal after
// aclNorm.
func TestACLCommandsAgainstRedis(t *testing.T) {
	for _, proto := range []string{"2", "3"} {
		t.Run("RESP"+proto, func(t *testing.T) { aclCommandsAgainstRedis(t, proto) })
	}
}

func aclCommandsAgainstRedis(t *testing.T, proto string) {
	p := newACLPair(t)
	p.same("a", "HELLO", proto)
	steps := [][]string{
		{"ACL", "WHOAMI"}, {"ACL", "USERS"}, {"ACL", "LIST"}, {"ACL", "GETUSER", "default"},
		{"ACL", "SETUSER", "alice"}, {"ACL", "GETUSER", "alice"}, {"ACL", "LIST"},
		{"ACL", "SETUSER", "bob", "on", ">p1", "~foo*", "%R~bar", "%W~baz", "&ch*", "+get", "-@all", "+@string",
			"-set", "+client|id", "+select|0", "(~x* +set)", "(%R~y* &z +@read -@hash)"},
		{"ACL", "GETUSER", "bob"}, {"ACL", "LIST"},
		{"ACL", "SETUSER", "c", "%RW~*", "%R~*"}, {"ACL", "SETUSER", "c2", "%R~*"}, {"ACL", "SETUSER", "c3", "%R"},
		{"ACL", "SETUSER", "c4", "%X~a"}, {"ACL", "SETUSER", "c5", "~a", "allkeys"}, {"ACL", "SETUSER", "c6", "allkeys", "~a"},
		{"ACL", "SETUSER", "c7", "&*", "&a"}, {"ACL", "SETUSER", "c8", "%RR~a"}, {"ACL", "SETUSER", "c9", "%RW~a", "%W~a", "~b", "%R~b"},
		{"ACL", "SETUSER", "x", "reset"}, {"ACL", "SETUSER", "y", "+@bogus"}, {"ACL", "SETUSER", "y", "+bogus"},
		{"ACL", "SETUSER", "y", "+client|id|x"}, {"ACL", "SETUSER", "y", "+client|"}, {"ACL", "SETUSER", "y", "-select|0"},
		{"ACL", "SETUSER", "y", "+get|x"}, {"ACL", "SETUSER", "y", "(+get"}, {"ACL", "SETUSER", "y", "(+get", "x", "~a)", "foo"},
		{"ACL", "SETUSER", "y", "#abc"}, {"ACL", "SETUSER", "y", "<nope"}, {"ACL", "SETUSER", "a b"},
		{"ACL", "SETUSER", "y", "#" + "f64551fcd6f07823cb87971cfb91446425da18286b3ab1ef935e0cbd7a69f68a", ">x", ">x", "<x"},
		{"ACL", "SETUSER", "y", "!f64551fcd6f07823cb87971cfb91446425da18286b3ab1ef935e0cbd7a69f68a", "nopass", "skip-sanitize-payload"},
		{"ACL", "GETUSER", "y"}, {"ACL", "SETUSER", "y", "resetpass", "sanitize-payload", "on", "off", "clearselectors"},
		{"ACL", "SETUSER", "o1", "-@all", "+zadd", "+get", "+lpush", "+hget", "+set", "+client", "-client|kill", "+config|get"},
		{"ACL", "SETUSER", "o2", "+@all", "-zadd", "-get", "-lpush", "-@string", "+get"},
		{"ACL", "SETUSER", "o3", "-@all", "+@read", "-@string", "+@write", "-get"},
		{"ACL", "SETUSER", "o4", "allcommands", "-@dangerous", "+flushdb", "nocommands", "+@fast", "-@write"},
		{"ACL", "SETUSER", "o5", "+@all", "-client", "+client|list", "-config|set", "+debug|object", "+select|1", "+select|2"},
		{"ACL", "SETUSER", "o6", "-@all", "+@pubsub", "+@admin", "-@dangerous", "+@scripting", "+@transaction"},
		{"ACL", "SETUSER", "o7", "resetkeys", "~a", "%R~b", "resetkeys", "~c", "resetchannels", "&x", "allchannels"},
		{"ACL", "LIST"}, {"ACL", "GETUSER", "o1"}, {"ACL", "GETUSER", "o5"}, {"ACL", "GETUSER", "nobody"},
		{"ACL", "DELUSER", "default"}, {"ACL", "DELUSER", "nobody", "y", "c9"}, {"ACL", "USERS"},
		{"ACL", "DRYRUN", "bob", "get", "foo1"}, {"ACL", "DRYRUN", "bob", "get", "zz"}, {"ACL", "DRYRUN", "bob", "set", "foo1", "v"},
		{"ACL", "DRYRUN", "bob", "set", "x1", "v"}, {"ACL", "DRYRUN", "bob", "publish", "ch1", "m"},
		{"ACL", "DRYRUN", "bob", "getrange", "bar", "0", "1"}, {"ACL", "DRYRUN", "bob", "append", "bar", "x"},
		{"ACL", "DRYRUN", "bob", "append", "baz", "x"}, {"ACL", "DRYRUN", "bob", "get", "baz"}, {"ACL", "DRYRUN", "bob", "strlen", "y1"},
		{"ACL", "DRYRUN", "bob", "hget", "y1", "f"}, {"ACL", "DRYRUN", "bob", "hset", "y1", "f", "v"},
		{"ACL", "DRYRUN", "bob", "publish", "z", "m"}, {"ACL", "DRYRUN", "bob", "select", "0"}, {"ACL", "DRYRUN", "bob", "select", "1"},
		{"ACL", "DRYRUN", "bob", "client", "id"}, {"ACL", "DRYRUN", "bob", "client", "kill", "1.1.1.1:1"},
		{"ACL", "DRYRUN", "nobody", "get", "a"}, {"ACL", "DRYRUN", "bob", "nocmd"}, {"ACL", "DRYRUN", "bob", "get"},
		{"ACL", "DRYRUN", "bob", "mset", "foo1", "1", "zz", "2"}, {"ACL", "DRYRUN", "bob", "mget", "foo1", "bar", "zz"},
		{"ACL", "SETUSER", "ch", "resetchannels", "&c*", "+@all", "~*"},
		{"ACL", "DRYRUN", "ch", "psubscribe", "c*"}, {"ACL", "DRYRUN", "ch", "psubscribe", "c"}, {"ACL", "DRYRUN", "ch", "subscribe", "cx", "zz"},
		{"ACL", "DRYRUN", "ch", "publish", "zz", "x"}, {"ACL", "DRYRUN", "ch", "spublish", "cz", "x"}, {"ACL", "DRYRUN", "ch", "ssubscribe", "zz"},
		{"ACL", "DRYRUN", "ch", "unsubscribe", "zz"}, {"ACL", "DRYRUN", "ch", "set", "a"},
		{"ACL", "GENPASS", "4097"}, {"ACL", "GENPASS", "0"}, {"ACL", "GENPASS", "x"}, {"ACL", "WHOAMI", "x"},
		{"ACL", "CAT"}, {"ACL", "CAT", "nope"}, {"ACL", "CAT", "a", "b"},
		{"ACL", "LOG", "x"}, {"ACL", "LOG", "0"}, {"ACL", "LOG", "-1"}, {"ACL", "LOG", "1", "2"},
		{"ACL", "SAVE"}, {"ACL", "LOAD"}, {"ACL", "HELP"}, {"ACL"}, {"ACL", "NOPE"},
		{"CLIENT", "KILL", "USER", "nobody"}, {"CLIENT", "KILL", "USER", "bob"},
		{"CONFIG", "SET", "acl-pubsub-default", "allchannels"}, {"ACL", "SETUSER", "p1"}, {"ACL", "SETUSER", "p2", "&x"},
		{"ACL", "SETUSER", "bob", "reset"}, {"ACL", "GETUSER", "p1"}, {"ACL", "GETUSER", "bob"},
		{"ACL", "SETUSER", "p3", "(~a +get)"}, {"ACL", "GETUSER", "p3"},
		{"CONFIG", "SET", "acl-pubsub-default", "resetchannels"}, {"ACL", "SETUSER", "p4"}, {"ACL", "LIST"},
		{"CONFIG", "SET", "acllog-max-len", "2"}, {"AUTH", "p1", "x"}, {"AUTH", "p2", "x"}, {"AUTH", "p3", "x"},
		{"ACL", "LOG"}, {"CONFIG", "SET", "acllog-max-len", "0"}, {"ACL", "LOG"}, {"CONFIG", "SET", "acllog-max-len", "128"},
	}
	for _, s := range steps {
		p.same("a", s...)
	}
	for _, n := range []string{"8", "1", "7", "256"} {
		got, want := p.run("a", "ACL", "GENPASS", n)
		if len(got) != len(want) {
			t.Errorf("GENPASS %s: %q vs %q", n, got, want)
		}
	}
	for _, cat := range []string{"keyspace", "read", "write", "set", "sortedset", "list", "hash", "string", "bitmap",
		"hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow", "blocking", "dangerous", "connection",
		"transaction", "scripting", "STRING"} {
		p.same("a", "ACL", "CAT", cat)
	}
}

// A restricted user's commands, transactions, scripts and channels, and the ACL LOG they leave,
// against redis-server 7.0.15, in RESP2 and RESP3.
func TestACLEnforcementAgainstRedis(t *testing.T) {
	for _, proto := range []string{"2", "3"} {
		t.Run("RESP"+proto, func(t *testing.T) { aclEnforcementAgainstRedis(t, proto) })
	}
}

func aclEnforcementAgainstRedis(t *testing.T, proto string) {
	p := newACLPair(t)
	for _, c := range []string{"a", "u"} {
		p.same(c, "HELLO", proto)
	}
	type st struct {
		conn string
		args []string
	}
	a := func(args ...string) st { return st{"a", args} }
	u := func(args ...string) st { return st{"u", args} }
	steps := []st{
		a("ACL", "SETUSER", "bob", "on", ">p1", "~foo*", "%R~bar", "%W~baz", "&ch*", "-@all", "+@string", "-set",
			"+client|id", "+select|0", "+multi", "+exec", "+discard", "+eval", "+evalsha", "+@pubsub", "-psubscribe", "(~x* +set +get)"),
		a("SET", "bar", "1"), a("SET", "foo1", "2"),
		u("GET", "foo1"), u("AUTH", "bob", "wrong"), u("AUTH", "nobody", "p1"), u("AUTH", "bob", "p1"),
		u("ACL", "WHOAMI"), u("GET", "foo1"), u("GET", "zz"), u("SET", "foo1", "v"), u("SET", "x1", "v"), u("GET", "x1"),
		u("APPEND", "bar", "x"), u("GETRANGE", "bar", "0", "0"), u("APPEND", "baz", "x"), u("GET", "baz"),
		u("MGET", "foo1", "bar", "zz"), u("MSET", "foo2", "1", "baz", "2"), u("MSET", "foo2", "1", "bar", "2"),
		u("SELECT", "0"), u("SELECT", "1"), u("CLIENT", "KILL", "ID", "999"), u("HSET", "foo1", "f", "v"),
		u("PUBLISH", "ch1", "m"), u("PUBLISH", "zz", "m"), u("PSUBSCRIBE", "ch*"),
		u("MULTI"), u("GET", "foo1"), u("GET", "zz"), u("EXEC"),
		u("MULTI"), u("GET", "foo1"), u("INCR", "foo9"), u("EXEC"),
		u("MULTI"), u("GET", "foo1"), u("INCR", "foo9"),
		a("ACL", "SETUSER", "bob", "-incr"),
		u("EXEC"),
		u("EVAL", "return redis.call('get','zz')", "0"), u("EVAL", "return redis.call('get','foo1')", "0"),
		u("EVAL", "return redis.pcall('hset','foo1','f','v')", "0"), u("EVAL", "return redis.pcall('get',KEYS[1])", "1", "zz"),
		u("EVAL", "return redis.acl_check_cmd('get','zz')", "0"), u("EVAL", "return redis.acl_check_cmd('get','foo1')", "0"),
		u("EVAL", "return redis.acl_check_cmd('hset','foo1','f','v')", "0"), u("EVAL", "return redis.pcall('publish','zz','m')", "0"),
		u("EVAL", "return redis.pcall('publish','ch2','m')", "0"),
		u("HELLO", "2", "AUTH", "bob", "nope"), u("HELLO", "2", "AUTH", "default", "x"), u("ACL", "WHOAMI"),
		a("ACL", "LOG"), a("ACL", "LOG", "2"), a("ACL", "LOG", "RESET"), a("ACL", "LOG"),
		a("ACL", "SETUSER", "bob", "off"), u("AUTH", "bob", "p1"), a("ACL", "LOG", "1"),
		a("ACL", "SETUSER", "bob", "on"),
		u("RESET"), u("ACL", "WHOAMI"), u("AUTH", "bob", "p1"), u("ACL", "WHOAMI"),
		a("CONFIG", "SET", "requirepass", "secret"), a("ACL", "GETUSER", "default"),
		st{"n", []string{"GET", "foo1"}}, st{"n", []string{"PING"}}, st{"n", []string{"ACL", "WHOAMI"}}, st{"n", []string{"AUTH", "x"}},
		st{"n", []string{"AUTH", "secret"}}, st{"n", []string{"ACL", "WHOAMI"}},
		a("AUTH", "secret"), a("CONFIG", "SET", "requirepass", ""), a("ACL", "GETUSER", "default"),
		st{"m", []string{"ACL", "WHOAMI"}}, st{"m", []string{"AUTH", "x"}},
		a("ACL", "SETUSER", "default", "resetpass"), st{"k", []string{"GET", "a"}}, st{"k", []string{"HELLO", "2"}},
		a("ACL", "SETUSER", "default", "nopass"), st{"k", []string{"GET", "a"}},
		a("CLIENT", "KILL", "USER", "bob"), a("ACL", "DELUSER", "bob"),
	}
	for _, s := range steps {
		p.same(s.conn, s.args...)
	}
}

// A deleted user's connections are closed, as Redis's ACLFreeUserAndKillClients does; ACL LOAD
// closes those of every user it replaces but default; a changed user's connections stay.
func TestACLDeletedUserDisconnected(t *testing.T) {
	p := newACLPair(t)
	p.same("a", "ACL", "SETUSER", "bob", "on", ">pw", "~*", "+@all")
	p.same("b", "AUTH", "bob", "pw")
	p.same("c", "AUTH", "bob", "pw")
	p.same("b", "ACL", "SETUSER", "bob", "-@dangerous")
	p.same("c", "PING")
	p.same("a", "ACL", "DELUSER", "bob")
	for _, name := range []string{"b", "c"} {
		if !p.hk[name].stream.closed {
			t.Errorf("HotKV kept connection %s of the deleted user open", name)
		}
		rw := p.redis[name]
		rw.Write(encodeCommand([]string{"PING"}))
		rw.Flush()
		if _, err := rw.ReadByte(); err == nil {
			t.Errorf("Redis kept connection %s of the deleted user open (the test's premise)", name)
		}
	}
	p.same("a", "ACL", "WHOAMI")
}

// Refusals count in INFO errorstats (NOPERM, NOAUTH, WRONGPASS) and in the refused command's
// rejected_calls, as Redis counts them.
func TestACLErrorStatsAgainstRedis(t *testing.T) {
	p := newACLPair(t)
	p.same("a", "CONFIG", "RESETSTAT") // command statistics live in the table, shared by every engine
	p.same("a", "ACL", "SETUSER", "bob", "on", ">pw", "~a*", "-@all", "+get", "+auth")
	p.same("u", "AUTH", "bob", "nope")
	p.same("u", "AUTH", "bob", "pw")
	p.same("u", "GET", "b")
	p.same("u", "GET", "a")
	p.same("u", "SET", "a", "1")
	p.same("u", "AUTH", "default", "x")
	for _, section := range []string{"errorstats"} {
		got, want := p.run("a", "INFO", section)
		t.Logf("redis: %s", infoLines(want, "errorstat_"))
		if g, w := infoLines(got, "errorstat_"), infoLines(want, "errorstat_"); g != w {
			t.Errorf("INFO %s:\nhotkv: %s\nredis: %s", section, g, w)
		}
	}
	got, want := p.run("a", "INFO", "commandstats")
	for _, cmd := range []string{"cmdstat_get:", "cmdstat_set:", "cmdstat_auth:"} {
		g, w := infoLines(got, cmd), infoLines(want, cmd)
		if statField(g, "rejected_calls") != statField(w, "rejected_calls") || statField(g, "failed_calls") != statField(w, "failed_calls") {
			t.Errorf("%s\nhotkv: %s\nredis: %s", cmd, g, w)
		}
	}
}

func infoLines(raw, prefix string) string {
	var out []string
	for _, l := range strings.Split(raw, "\r\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

func statField(line, name string) string {
	for _, f := range strings.Split(strings.ReplaceAll(line, ":", ","), ",") {
		if strings.HasPrefix(f, name+"=") {
			return f
		}
	}
	return ""
}

// A subscriber whose user's channel rules change loses its connection only when a subscription
// is no longer allowed, as Redis's ACLKillPubsubClientsIfNeeded decides.
func TestACLRevokedSubscribersAgainstRedis(t *testing.T) {
	p := newACLPair(t)
	p.same("a", "ACL", "SETUSER", "s", "on", ">pw", "resetchannels", "&c*", "&news", "+@all")
	subs := map[string][]string{"ch": {"SUBSCRIBE", "c1"}, "pat": {"PSUBSCRIBE", "c*"}, "news": {"SUBSCRIBE", "news"},
		"shard": {"SSUBSCRIBE", "c2"}}
	for conn, cmd := range subs {
		p.same(conn, "HELLO", "3", "AUTH", "s", "pw")
		p.same(conn, cmd...)
	}
	alive := func(step string) {
		t.Helper()
		for conn := range subs {
			tc := p.hk[conn]
			tc.send(nil) // its next Serve runs the re-check a Wake would start
			rw := p.redis[conn]
			rw.Write(encodeCommand([]string{"PING"}))
			rw.Flush()
			p.conns[conn].SetReadDeadline(time.Now().Add(500 * time.Millisecond))
			_, err := rw.ReadString('\n')
			redisAlive := err == nil
			t.Logf("%s: %s open on Redis: %v", step, conn, redisAlive)
			if hk := !tc.stream.closed; hk != redisAlive {
				t.Errorf("%s: connection %s open on HotKV %v, on Redis %v", step, conn, hk, redisAlive)
			}
			p.conns[conn].SetReadDeadline(time.Now().Add(time.Minute))
		}
	}
	p.same("a", "ACL", "SETUSER", "s", "&extra")
	alive("a channel added")
	p.same("a", "ACL", "SETUSER", "s", "resetchannels", "&c1", "&c*", "&news")
	alive("c2 covered by c* still")
	p.same("a", "ACL", "SETUSER", "s", "resetchannels", "&c*")
	alive("news revoked")
	p.same("a", "ACL", "SETUSER", "s", "resetchannels", "&c1", "&c2")
	alive("the pattern c* revoked")
	p.same("a", "ACL", "SETUSER", "s", "resetchannels")
	alive("everything revoked")
}
