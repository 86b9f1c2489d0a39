package script

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The differential scripts as a transcript, for machines without redis-server: a live run
// records, per case and caller protocol, every command the engine's Host forwarded with the
// reply Redis gave, the command table Host.Command answered from, and the reply of EVAL on
// Redis. Without a live server the test replays it: a Host answers each redis.call from the
// recording (the arguments must match) and the engine's reply must equal Redis's. Regenerate
// with `go test ./src/script/ -run TestDifferentialScripts -update` where redis-server is
// installed; a case whose body changed since is reported as out of date. HOTKV_SCRIPT_REPLAY=1
// replays even where a server is present.

var update = flag.Bool("update", false, "rewrite testdata/scripts.golden from the reference redis-server")

const goldenPath = "testdata/scripts.golden"

type transcript struct {
	cmds map[string]cmdInfo
	runs []*transcriptRun
}

type transcriptRun struct {
	name  string
	body  string // the body's SHA1: a changed case is out of date
	calls []recordedCall
	want  []byte
	t     *transcript
}

type recordedCall struct {
	proto int
	args  [][]byte
	reply []byte
}

func newTranscript() *transcript { return &transcript{cmds: map[string]cmdInfo{}} }

func bodySum(body string) string {
	s := sha1.Sum([]byte(body))
	return hex.EncodeToString(s[:])
}

func (tr *transcript) start(name string, c diffCase, want []byte) *transcriptRun {
	r := &transcriptRun{name: name, body: bodySum(c.body), want: want, t: tr}
	tr.runs = append(tr.runs, r)
	return r
}

// recordingHost is redisHost that records its calls into a transcript run.
type recordingHost struct {
	*redisHost
	run *transcriptRun
}

func (h *recordingHost) Call(args [][]byte, proto int, r Repl, dst []byte) []byte {
	at := len(dst)
	dst = h.redisHost.Call(args, proto, r, dst)
	copied := make([][]byte, len(args))
	for i, a := range args {
		copied[i] = bytes.Clone(a)
	}
	h.run.calls = append(h.run.calls, recordedCall{proto: proto, args: copied, reply: bytes.Clone(dst[at:])})
	return dst
}

func (h *recordingHost) saveCommands() {
	for name, ci := range h.info {
		h.run.t.cmds[name] = ci
	}
}

// write saves the transcript: "cmd NAME ARITY FLAGS", then per run "run NAME BODYSHA",
// "call PROTO ARGS... -> REPLY" lines and "want REPLY", every byte string Go-quoted.
func (tr *transcript) write(t *testing.T, path string) {
	var b strings.Builder
	b.WriteString("# Recorded from redis-server 7.0.15 by TestDifferentialScripts -update; replayed without one.\n")
	names := make([]string, 0, len(tr.cmds))
	for n := range tr.cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		ci := tr.cmds[n]
		flags := make([]string, 0, len(ci.flags))
		for f := range ci.flags {
			flags = append(flags, f)
		}
		sort.Strings(flags)
		fmt.Fprintf(&b, "cmd %s %d %s\n", strconv.Quote(n), ci.arity, strconv.Quote(strings.Join(flags, ",")))
	}
	for _, r := range tr.runs {
		fmt.Fprintf(&b, "run %s %s\n", strconv.Quote(r.name), r.body)
		for _, c := range r.calls {
			fmt.Fprintf(&b, "call %d", c.proto)
			for _, a := range c.args {
				b.WriteString(" " + strconv.Quote(string(a)))
			}
			b.WriteString(" -> " + strconv.Quote(string(c.reply)) + "\n")
		}
		b.WriteString("want " + strconv.Quote(string(r.want)) + "\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readTranscript(t *testing.T, path string) *transcript {
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("no redis-server and no transcript: %v", err)
	}
	defer f.Close()
	tr := newTranscript()
	var cur *transcriptRun
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		line := sc.Text()
		kind, rest, _ := strings.Cut(line, " ")
		q := quoted{s: rest}
		switch kind {
		case "cmd":
			name := q.next(t)
			arity, _ := strconv.Atoi(q.word())
			ci := cmdInfo{arity: arity, flags: map[string]bool{}}
			for _, f := range strings.Split(q.next(t), ",") {
				if f != "" {
					ci.flags[f] = true
				}
			}
			tr.cmds[name] = ci
		case "run":
			cur = &transcriptRun{name: q.next(t), body: q.word(), t: tr}
			tr.runs = append(tr.runs, cur)
		case "call":
			proto, _ := strconv.Atoi(q.word())
			c := recordedCall{proto: proto}
			for !q.arrow() {
				c.args = append(c.args, []byte(q.next(t)))
			}
			c.reply = []byte(q.next(t))
			cur.calls = append(cur.calls, c)
		case "want":
			cur.want = []byte(q.next(t))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return tr
}

// quoted reads the Go-quoted strings and words of one transcript line.
type quoted struct{ s string }

func (q *quoted) next(t *testing.T) string {
	q.s = strings.TrimLeft(q.s, " ")
	p, err := strconv.QuotedPrefix(q.s)
	if err != nil {
		t.Fatalf("transcript: bad string at %.40q", q.s)
	}
	q.s = q.s[len(p):]
	v, _ := strconv.Unquote(p)
	return v
}

func (q *quoted) word() string {
	q.s = strings.TrimLeft(q.s, " ")
	w, rest, _ := strings.Cut(q.s, " ")
	q.s = rest
	return w
}

func (q *quoted) arrow() bool {
	q.s = strings.TrimLeft(q.s, " ")
	if strings.HasPrefix(q.s, "->") {
		q.s = q.s[2:]
		return true
	}
	return q.s == ""
}

// replayHost answers from one transcript run.
type replayHost struct {
	t    *testing.T
	cmds map[string]cmdInfo
	run  *transcriptRun
	next int
}

func (h *replayHost) Command(args [][]byte) Command {
	ci, ok := h.cmds[strings.ToLower(string(args[0]))]
	if !ok || ci.arity == 0 {
		return 0
	}
	return (&redisHost{info: map[string]cmdInfo{strings.ToLower(string(args[0])): ci}}).Command(args)
}

func (h *replayHost) Call(args [][]byte, proto int, _ Repl, dst []byte) []byte {
	if h.next >= len(h.run.calls) {
		h.t.Errorf("call %q beyond the %d recorded", args, len(h.run.calls))
		return append(dst, "-ERR not recorded\r\n"...)
	}
	c := h.run.calls[h.next]
	h.next++
	if c.proto != proto || len(c.args) != len(args) {
		h.t.Errorf("call %d: %q in RESP%d, recorded %q in RESP%d", h.next, args, proto, c.args, c.proto)
	} else {
		for i := range args {
			if !bytes.Equal(args[i], c.args[i]) {
				h.t.Errorf("call %d: %q, recorded %q", h.next, args, c.args)
				break
			}
		}
	}
	return append(dst, c.reply...)
}

func (h *replayHost) Allowed([][]byte) bool { return true }
func (h *replayHost) Log(int, string)       {}

// replayScripts runs every case against the transcript.
func replayScripts(t *testing.T, e *Engine, cases []diffCase) {
	tr := readTranscript(t, goldenPath)
	byName := map[string]*transcriptRun{}
	for _, r := range tr.runs {
		byName[r.name] = r
	}
	t.Logf("no redis-server: replaying %s (%d runs)", goldenPath, len(tr.runs))
	for _, c := range cases {
		for _, proto := range []int{2, 3} {
			name := c.name + "/resp" + strconv.Itoa(proto)
			t.Run(name, func(t *testing.T) {
				r, ok := byName[name]
				if !ok || r.body != bodySum(c.body) {
					t.Fatalf("%s is not in %s or changed since: run with -update where redis-server is", name, goldenPath)
				}
				h := &replayHost{t: t, cmds: tr.cmds, run: r}
				var got []byte
				if s, errReply := e.Compile([]byte(c.body)); errReply != "" {
					got = appendErrorLine(nil, errReply)
				} else {
					got = e.Run(nil, h, s, byteSlices(c.keys), byteSlices(c.args), RunOptions{Proto: proto, ReadOnly: c.readOnly})
				}
				if h.next != len(r.calls) {
					t.Errorf("%d of %d recorded calls made", h.next, len(r.calls))
				}
				compareReplies(t, c, r.want, got)
			})
		}
	}
}
