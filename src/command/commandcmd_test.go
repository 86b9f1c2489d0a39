package command

import (
	"slices"
	"strings"
	"testing"

	"github.com/hotkv/hotkv/src/command/meta"
)

// redisInfo is the exact RESP2 COMMAND INFO entry Redis sends for a command whose subcommands are
// those HotKV implements: Redis's in Redis's order, then HotKV's own by name.
func redisInfo(t *testing.T, name string) string {
	m := meta.Lookup(name)
	if m == nil {
		t.Fatalf("no metadata for %s", name)
	}
	s := "*10\r\n" + m.Info(2)
	spec := findCommand([]byte(name)).spec
	if spec.Subs == nil {
		return s + "*0\r\n"
	}
	var subs, own []string
	for _, n := range m.Subs {
		if spec.Subs[n[len(name)+1:]] != nil {
			subs = append(subs, redisInfo(t, n))
		}
	}
	for _, sub := range spec.Subs {
		if meta.Lookup(sub.Name) == nil {
			own = append(own, sub.Name)
		}
	}
	slices.Sort(own)
	for _, n := range own {
		sub := spec.Subs[n[len(name)+1:]]
		subs = append(subs, "*10\r\n"+meta.New(n, sub.Arity, sub.Flags.Names(), sub.FirstKey, sub.LastKey,
			sub.Step, "hotkv").Info(2)+"*0\r\n")
	}
	return s + "*" + itoa(len(subs)) + "\r\n" + strings.Join(subs, "")
}

func itoa(n int) string { return string(appendInt(nil, n)) }

func appendInt(b []byte, n int) []byte {
	if n >= 10 {
		b = appendInt(b, n/10)
	}
	return append(b, byte('0'+n%10))
}

func TestCommandInfoIsRedisBytes(t *testing.T) {
	tc := newTestConn(t, newTestEngine())
	for _, s := range allSpecs() {
		if meta.Lookup(s.Name) == nil {
			continue
		}
		if got, want := tc.do("COMMAND", "INFO", s.Name), "*1\r\n"+redisInfo(t, s.Name); got != want {
			t.Errorf("COMMAND INFO %s:\n got %q\nwant %q", s.Name, got, want)
		}
	}
}

func TestCommandAllAndCount(t *testing.T) {
	tc := newTestConn(t, newTestEngine())
	n := len(Commands())
	if got := tc.do("COMMAND", "COUNT"); got != ":"+itoa(n)+"\r\n" {
		t.Errorf("COMMAND COUNT = %q, want %d", got, n)
	}
	// COMMAND with no subcommand: every top-level command, each entry as COMMAND INFO gives it.
	var want strings.Builder
	want.WriteString("*" + itoa(n) + "\r\n")
	for _, d := range commandIndex().top {
		want.WriteString(strings.TrimPrefix(tc.do("COMMAND", "INFO", d.Name), "*1\r\n"))
	}
	// A container called without a subcommand runs itself when its arity allows (COMMAND is -1).
	if got := tc.do("COMMAND"); got != want.String() {
		t.Errorf("COMMAND differs from the COMMAND INFO of every command: %.200q", got)
	}
	if got := tc.do("COMMAND", "INFO"); got != want.String() {
		t.Errorf("COMMAND INFO without names differs from COMMAND")
	}
}

func TestCommandListAll(t *testing.T) {
	tc := newTestConn(t, newTestEngine())
	got := splitReplies(t, []byte(tc.do("COMMAND", "LIST")))
	if len(got) != 1 {
		t.Fatalf("replies %q", got)
	}
	names := replyStrings(t, got[0])
	var want []string
	for _, s := range allSpecs() {
		want = append(want, s.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, want) {
		t.Errorf("COMMAND LIST = %v, want %v", names, want)
	}
	conn := replyStrings(t, tc.do("COMMAND", "LIST", "FILTERBY", "ACLCAT", "CONNECTION"))
	for _, n := range []string{"ping", "client|list", "command|count"} {
		if !slices.Contains(conn, n) {
			t.Errorf("FILTERBY ACLCAT connection misses %s: %v", n, conn)
		}
	}
	if slices.Contains(conn, "config|get") {
		t.Errorf("FILTERBY ACLCAT connection has config|get")
	}
}

// A table with a command Redis lacks, a Redis container with one of HotKV's own subcommands, and
// a Redis container with only some of its subcommands.
func ownTable() map[string]*Spec {
	return map[string]*Spec{
		"nexpire": {Name: "nexpire", Arity: -3, Flags: Write | Fast, FirstKey: 1, LastKey: 1, Step: 1},
		"config": (&Spec{Name: "config", Arity: -2}).sub(
			&Spec{Name: "config|zz", Arity: 2, Flags: Admin},
			&Spec{Name: "config|get", Arity: -3, Flags: Admin | NoScript | Loading | Stale},
			&Spec{Name: "config|aa", Arity: 3},
		),
		"get": {Name: "get", Arity: 2, Flags: ReadOnly | Fast, FirstKey: 1, LastKey: 1, Step: 1},
	}
}

func TestCommandOwnCommands(t *testing.T) {
	x := buildIndex(ownTable())
	if got := names(x.top); got != "config get nexpire" {
		t.Fatalf("top = %s", got)
	}
	cfg := x.byName["config"]
	if got := names(cfg.subs); got != "config|get config|aa config|zz" {
		t.Errorf("config subcommands %s: Redis's first, then HotKV's own by name", got)
	}
	own := x.byName["nexpire"]
	if !own.own || x.byName["get"].own || x.byName["config|get"].own || !x.byName["config|aa"].own {
		t.Error("own flags wrong")
	}
	for _, proto := range []int{2, 3} {
		c := &Ctx{Proto: proto}
		own.appendInfo(c)
		want := "*10\r\n" + meta.New("nexpire", -3, []string{"write", "fast"}, 1, 1, 1, "hotkv").Info(proto)
		if proto == 3 {
			want += "~0\r\n"
		} else {
			want += "*0\r\n"
		}
		if string(c.Out) != want {
			t.Errorf("RESP%d nexpire info %q, want %q", proto, c.Out, want)
		}
		c.Out = nil
		own.appendDocs(c)
		if proto == 3 && string(c.Out) != "%2\r\n$5\r\ngroup\r\n$6\r\nmodule\r\n$6\r\nmodule\r\n$5\r\nhotkv\r\n" {
			t.Errorf("nexpire docs %q", c.Out)
		}
	}
	c := &Ctx{Proto: 3}
	cfg.appendDocs(c)
	pairs, n := meta.Lookup("config").Docs(3)
	if want := "%" + itoa(n+1) + "\r\n" + pairs + "$11\r\nsubcommands\r\n%3\r\n$10\r\nconfig|get\r\n"; !strings.HasPrefix(string(c.Out), want) {
		t.Errorf("config docs %q\nwant prefix %q", c.Out, want)
	}
	var mod []string
	for _, d := range x.top {
		mod = d.appendNames(mod, listFilter([]byte("module"), "HotKV"))
	}
	if strings.Join(mod, " ") != "config|aa config|zz nexpire" {
		t.Errorf("FILTERBY MODULE hotkv = %v", mod)
	}
}

func names(ds []*cmdDoc) string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Name)
	}
	return strings.Join(out, " ")
}

func TestCommandGetKeysErrors(t *testing.T) {
	tc := newTestConn(t, newTestEngine())
	f := func(want string, args ...string) {
		t.Helper()
		if got := tc.do(append([]string{"COMMAND"}, args...)...); got != want {
			t.Errorf("COMMAND %v = %q, want %q", args, got, want)
		}
	}
	f("-ERR Invalid command specified\r\n", "GETKEYS", "nosuch", "x")
	f("-ERR Invalid command specified\r\n", "GETKEYS", "config", "nosuch")
	f("-ERR Invalid command specified\r\n", "GETKEYS", "config|get", "x")
	f("-ERR The command has no key arguments\r\n", "GETKEYS", "ping", "x")
	f("-ERR The command has no key arguments\r\n", "GETKEYSANDFLAGS", "config", "get", "x")
	f("-ERR wrong number of arguments for 'command|getkeys' command\r\n", "GETKEYS", "ping")
}

// GETKEYS reports the keys HotKV routes by, with flags from Redis's key specs.
func TestCommandGetKeysOwnTable(t *testing.T) {
	x := buildIndex(ownTable())
	d := x.byName["nexpire"]
	args := [][]byte{[]byte("nexpire"), []byte("k"), []byte("10")}
	if got := d.keyFlags(args, d.spec.keyIndexes(args, nil)); len(got) != 1 || strings.Join(got[0], " ") != "RW access update" {
		t.Errorf("nexpire key flags %v", got)
	}
	g := x.byName["get"]
	args = [][]byte{[]byte("get"), []byte("k")}
	if got := g.keyFlags(args, []int{1}); strings.Join(got[0], " ") != "RO access" {
		t.Errorf("get key flags %v", got)
	}
	if !d.hasKeys() || !g.hasKeys() || x.byName["config|get"].hasKeys() {
		t.Error("hasKeys")
	}
}

func TestVariableKeyFlags(t *testing.T) {
	f := func(line, want string) {
		t.Helper()
		var argv [][]byte
		for _, a := range strings.Fields(line) {
			argv = append(argv, []byte(a))
		}
		if got := strings.Join(variableKeyFlags(strings.ToLower(line[:strings.IndexByte(line, ' ')]), argv), " "); got != want {
			t.Errorf("%s: %q, want %q", line, got, want)
		}
	}
	f("set k v", "OW update")
	f("set k v nx get", "RW access update")
	f("set get get", "OW update") // the value "get" is not the option
	f("bitfield k get u8 0 overflow sat", "RO access")
	f("bitfield k get u8 0 set u8 0 1", "RW access update")
	f("bitfield k get u8", "RW access update") // a syntax error counts as a write
	f("get k", "")
}

func TestCommandHelpAndSyntax(t *testing.T) {
	tc := newTestConn(t, newTestEngine())
	help := tc.do("command", "help")
	if !strings.HasPrefix(help, "*21\r\n+COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n") ||
		!strings.HasSuffix(help, "+HELP\r\n+    Prints this help.\r\n") {
		t.Errorf("COMMAND HELP %q", help)
	}
	for _, args := range [][]string{{"LIST", "x"}, {"LIST", "FILTERBY", "x", "y"}, {"LIST", "FILTERBY", "ACLCAT"}} {
		if got := tc.do(append([]string{"COMMAND"}, args...)...); got != "-ERR syntax error\r\n" {
			t.Errorf("COMMAND %v = %q", args, got)
		}
	}
	if got := tc.do("COMMAND", "LIST", "FILTERBY", "ACLCAT", "nosuch"); got != "*0\r\n" {
		t.Errorf("unknown category: %q", got)
	}
}
