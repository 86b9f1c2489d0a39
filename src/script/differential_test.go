package script

import (
	"bytes"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/hotkv/hotkv/net/resp/resptest"
)

// diffCase is one script of testdata/scripts.txt, run on the reference server with EVAL and in
// the Engine (whose redis.call goes to the same server), for a RESP2 and a RESP3 caller.
type diffCase struct {
	name      string
	keys      []string
	args      []string
	setup     [][]string
	unordered bool // maps and sets: compare as sets (gopher-lua's table order is not Lua's)
	readOnly  bool // EVAL_RO
	body      string
}

// parseCases reads the table: "=== name", option lines (keys:, args:, setup:, unordered, ro),
// "---", then the body up to the next "===". Lines starting with "#" before a case are comments.
func parseCases(t *testing.T, path string) []diffCase {
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []diffCase
	var cur *diffCase
	inBody := false
	var body []string
	flush := func() {
		if cur != nil {
			cur.body = strings.TrimRight(strings.Join(body, "\n"), "\n")
			out = append(out, *cur)
		}
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if name, ok := strings.CutPrefix(line, "=== "); ok {
			flush()
			cur, inBody, body = &diffCase{name: name}, false, nil
			continue
		}
		switch {
		case cur == nil:
		case inBody:
			body = append(body, line)
		case line == "---":
			inBody = true
		case strings.HasPrefix(line, "keys:"):
			cur.keys = strings.Fields(line[5:])
		case strings.HasPrefix(line, "args:"):
			cur.args = strings.Fields(line[5:])
		case strings.HasPrefix(line, "setup:"):
			cur.setup = append(cur.setup, strings.Fields(line[6:]))
		case line == "unordered":
			cur.unordered = true
		case line == "ro":
			cur.readOnly = true
		case strings.TrimSpace(line) == "":
		default:
			t.Fatalf("%s: bad option line %q", cur.name, line)
		}
	}
	flush()
	return out
}

func TestDifferentialScripts(t *testing.T) {
	cases := parseCases(t, "testdata/scripts.txt")
	if len(cases) == 0 {
		t.Fatal("no cases")
	}
	e := New(Config{})
	defer e.Close()
	if os.Getenv("HOTKV_SCRIPT_REPLAY") != "" || tryRedis() == "" {
		replayScripts(t, e, cases) // testdata/scripts.golden, recorded from redis-server
		return
	}
	rec := newTranscript()
	callers := map[int]*conn{2: dial(t, 2), 3: dial(t, 3)}
	for _, c := range cases {
		for _, proto := range []int{2, 3} {
			name := c.name + "/resp" + strconv.Itoa(proto)
			t.Run(name, func(t *testing.T) {
				want := evalOnRedis(t, callers[proto], c)
				got := evalInEngine(t, e, callers[proto], c, proto, rec.start(name, c, want))
				compareReplies(t, c, want, got)
			})
		}
	}
	if *update {
		rec.write(t, goldenPath)
	}
}

func compareReplies(t *testing.T, c diffCase, want, got []byte) {
	t.Helper()
	if c.unordered {
		want, got = canonical(t, want), canonical(t, got)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("script:\n%s\nredis:  %q\nengine: %q", c.body, want, got)
	}
}

func reset(t *testing.T, cn *conn, c diffCase) {
	cn.do(t, "FLUSHALL")
	for _, s := range c.setup {
		cn.do(t, s...)
	}
}

func evalOnRedis(t *testing.T, cn *conn, c diffCase) []byte {
	reset(t, cn, c)
	cmd := "EVAL"
	if c.readOnly {
		cmd = "EVAL_RO"
	}
	args := append([]string{cmd, c.body, strconv.Itoa(len(c.keys))}, c.keys...)
	return cn.do(t, append(args, c.args...)...)
}

func evalInEngine(t *testing.T, e *Engine, cn *conn, c diffCase, proto int, run *transcriptRun) []byte {
	reset(t, cn, c)
	h := &recordingHost{redisHost: newRedisHost(t), run: run}
	defer h.saveCommands()
	s, errReply := e.Compile([]byte(c.body))
	if errReply != "" {
		return appendErrorLine(nil, errReply)
	}
	return e.Run(nil, h, s, byteSlices(c.keys), byteSlices(c.args), RunOptions{Proto: proto, ReadOnly: c.readOnly})
}

func byteSlices(ss []string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

// canonical re-renders a reply with the elements of every map, set and array sorted (the
// "unordered" cases, whose arrays are RESP2's sets).
func canonical(t *testing.T, raw []byte) []byte {
	v, err := resptest.Parse(raw)
	if err != nil {
		t.Fatalf("parse %q: %v", raw, err)
	}
	return []byte(sortValue(v).String())
}

func sortValue(v resptest.Value) resptest.Value {
	for i := range v.Elems {
		v.Elems[i] = sortValue(v.Elems[i])
	}
	switch v.Kind {
	case '~', '*':
		sort.Slice(v.Elems, func(i, j int) bool { return v.Elems[i].String() < v.Elems[j].String() })
	case '%':
		pairs := make([][2]resptest.Value, len(v.Elems)/2)
		for i := range pairs {
			pairs[i] = [2]resptest.Value{v.Elems[2*i], v.Elems[2*i+1]}
		}
		sort.Slice(pairs, func(i, j int) bool { return pairs[i][0].String() < pairs[j][0].String() })
		for i, p := range pairs {
			v.Elems[2*i], v.Elems[2*i+1] = p[0], p[1]
		}
	}
	return v
}
