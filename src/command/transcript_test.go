package command

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/net/resp"
	"github.com/hotkv/hotkv/net/resp/resptest"
)

// Transcripts: testdata/<family>.txt holds commands and the exact RESP2 replies of Redis 7.0.15;
// testdata/<family>.resp3.txt the same commands after HELLO 3. `go test ./src/command -run
// Transcript -update` re-records both from a redis-server on PATH.
//
// Format: a line "> CMD args" (inline syntax, quotes allowed) starts a step; the lines after it,
// up to the next step, are the reply (or replies) with CRLF written as a newline. ">* " compares an aggregate's
// elements ignoring their order, but keeps key/value pairs together: a map's, and a flat array's
// when the command replies pairs (CONFIG GET, HGETALL, HRANDFIELD … WITHVALUES, ZRANDMEMBER …
// WITHSCORES). ">~ " compares the reply's shape: its type, an aggregate's whole header (type and
// length) and an integer's sign; for a step with several replies ">* " compares them as a set.
// Lines starting "## " are comments.
//
// Several connections: "@name> CMD" (and "@name>* ", "@name>~ ") runs CMD on connection name,
// opened on first use (plain steps run on connection "a"); "@name<" sends nothing and reads what
// arrived on it meanwhile (a published message); "{id:name}" in a step's arguments is connection
// name's client id on the server at hand. A file whose first line is "## sync" lets a step have
// any number of replies (SUBSCRIBE a b) or none: recording reads until Redis stays quiet for
// syncQuiet, replaying takes everything HotKV wrote.
//
// Files that rest on several connections or on push messages need a redis-server for nothing but
// -update: both sides are replayed here.
var update = flag.Bool("update", false, "re-record transcripts from redis-server")

type step struct {
	mode    string // ">", ">*", ">~" or "<"
	conn    string // the connection it runs on
	line    string
	args    [][]byte
	comment string // comment lines before the step
	want    string
}

func parseTranscript(t *testing.T, data []byte) []step {
	var steps []step
	var comment strings.Builder
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		conn, mode, rest, isCmd := cutStep(line)
		switch {
		case isCmd:
			var args [][]byte
			if mode != "<" {
				args = splitInline(t, rest)
			}
			steps = append(steps, step{mode: mode, conn: conn, line: rest, args: args, comment: comment.String()})
			comment.Reset()
		case strings.HasPrefix(line, "## ") || line == "##":
			comment.WriteString(line + "\n")
		case len(steps) == 0:
			if line != "" {
				t.Fatalf("reply line before any command: %q", line)
			}
		default:
			steps[len(steps)-1].want += line + "\r\n"
		}
	}
	return steps
}

func cutStep(line string) (conn, mode, rest string, ok bool) {
	conn = "a"
	if name, after, found := strings.Cut(line, ">"); found && strings.HasPrefix(name, "@") && !strings.Contains(name, " ") {
		conn, line = name[1:], ">"+after
	} else if strings.HasPrefix(line, "@") && strings.HasSuffix(line, "<") && !strings.Contains(line, " ") {
		return line[1 : len(line)-1], "<", "", true
	}
	for _, m := range []string{">* ", ">~ ", "> "} {
		if r, found := strings.CutPrefix(line, m); found {
			return conn, strings.TrimSpace(m), r, true
		}
	}
	return "", "", "", false
}

// stepHeader is the step's line as the transcript writes it.
func (s step) header() string {
	prefix := ""
	if s.conn != "a" || s.mode == "<" {
		prefix = "@" + s.conn
	}
	if s.mode == "<" {
		return prefix + "<"
	}
	return prefix + s.mode + " " + s.line
}

// isSync reports whether a transcript asks for sentinel reads.
func isSync(data []byte) bool { return bytes.HasPrefix(data, []byte("## sync\n")) }

func splitInline(t *testing.T, line string) [][]byte {
	lim := resp.DefaultLimits()
	args, n, _, err := resp.Parse(nil, []byte(line+"\r\n"), &lim)
	if err != nil || n == 0 || len(args) == 0 {
		t.Fatalf("bad transcript command %q: %v", line, err)
	}
	for i := range args {
		args[i] = bytes.Clone(args[i])
	}
	return args
}

func encodeArgs(args [][]byte) []byte {
	b := resp.AppendArrayLen(nil, len(args))
	for _, a := range args {
		b = resp.AppendBulk(b, a)
	}
	return b
}

func TestTranscripts(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.txt")
	for _, f := range files {
		if strings.HasSuffix(f, ".resp3.txt") {
			continue
		}
		name := strings.TrimSuffix(filepath.Base(f), ".txt")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			steps := parseTranscript(t, data)
			sync := isSync(data)
			f3 := strings.TrimSuffix(f, ".txt") + ".resp3.txt"
			if *update {
				recordTranscript(t, f, steps, 2, sync)
				recordTranscript(t, f3, steps, 3, sync)
				return
			}
			t.Run("resp2", func(t *testing.T) { checkTranscript(t, steps, 2, sync) })
			data3, err := os.ReadFile(f3)
			if err != nil {
				t.Fatalf("missing RESP3 transcript (run with -update): %v", err)
			}
			t.Run("resp3", func(t *testing.T) { checkTranscript(t, parseTranscript(t, data3), 3, sync) })
		})
	}
}

func checkTranscript(t *testing.T, steps []step, proto int, sync bool) {
	e := newTestEngine()
	conns := map[string]*testConn{}
	conn := func(name string) *testConn {
		if conns[name] == nil {
			conns[name] = newTestConn(t, e)
			if proto == 3 {
				conns[name].do("HELLO", "3")
			}
		}
		return conns[name]
	}
	ids := func(name string) string { return strconv.FormatUint(conn(name).client.ID, 10) }
	for i, s := range steps {
		tc := conn(s.conn)
		var out []byte
		if s.mode != "<" {
			out, _ = tc.send(encodeArgs(withIDs(s.args, ids)))
		} else {
			out, _ = tc.send(nil) // what other connections queued for it meanwhile
		}
		if !replyMatches(t, s, string(out), s.want) {
			t.Errorf("step %d: %s\n got: %q\nwant: %q", i+1, s.header(), out, s.want)
		}
	}
}

func replyMatches(t *testing.T, s step, got, want string) bool {
	switch s.mode {
	case ">~":
		g, w := trySplit(got), trySplit(want)
		if g == nil || w == nil {
			// A bulk holding newlines (CLIENT INFO) is written with its CRLFs as newlines and
			// does not parse back: compare the first reply's shape.
			return replyShape(got) == replyShape(want)
		}
		if len(g) != len(w) {
			return false
		}
		for i := range g {
			if replyShape(g[i]) != replyShape(w[i]) {
				return false
			}
		}
		return true
	case ">*":
		if g, w := trySplit(got), trySplit(want); len(w) > 1 || len(g) > 1 {
			slices.Sort(g)
			slices.Sort(w)
			return slices.Equal(g, w)
		}
		per := 1
		if pairReply(s.args) {
			per = 2
		}
		return sortedElems(t, got, per) == sortedElems(t, want, per)
	}
	return got == want
}

// trySplit splits a reply stream into replies, or returns nil if it does not parse.
func trySplit(raw string) []string {
	r := bufio.NewReader(strings.NewReader(raw))
	var out []string
	for {
		b, err := resptest.ReadRaw(r)
		if err == io.EOF {
			return out
		}
		if err != nil {
			return nil
		}
		out = append(out, string(b))
	}
}

// replyShape is what ">~" compares: the first line of an aggregate (type and length), an
// integer's sign, else the type byte.
func replyShape(raw string) string {
	line, _, _ := strings.Cut(raw, "\r\n")
	switch {
	case line == "":
		return ""
	case strings.ContainsRune("*%~>|", rune(line[0])):
		return line
	case line[0] == ':':
		n, err := strconv.ParseInt(line[1:], 10, 64)
		if err != nil {
			return line
		}
		return fmt.Sprintf(":sign %d", cmp.Compare(n, 0))
	}
	return line[:1]
}

// pairReply reports whether the command of args replies a flat array of key/value pairs in RESP2.
func pairReply(args [][]byte) bool {
	name := strings.ToUpper(string(args[0]))
	has := func(word string) bool {
		return slices.ContainsFunc(args[1:], func(a []byte) bool { return strings.EqualFold(string(a), word) })
	}
	switch {
	case name == "CONFIG" && len(args) > 1 && strings.EqualFold(string(args[1]), "GET"), name == "HGETALL":
		return true
	case name == "HRANDFIELD":
		return has("WITHVALUES")
	case name == "ZRANDMEMBER":
		return has("WITHSCORES")
	}
	return false
}

// sortedElems returns an aggregate reply's header and its elements sorted, per elements at a time
// (a map's are always pairs).
func sortedElems(t *testing.T, raw string, per int) string {
	r := bufio.NewReader(strings.NewReader(raw))
	hdr, err := r.ReadString('\n')
	if err != nil || len(hdr) == 0 || !strings.ContainsRune("*~%", rune(hdr[0])) {
		return raw
	}
	if hdr[0] == '%' {
		per = 2
	} else if b, err := r.Peek(1); err == nil && b[0] == '*' {
		per = 1 // RESP3 replies pairs as arrays of two
	}
	var elems []string
	for {
		var group string
		for range per {
			e, err := resptest.ReadRaw(r)
			if err != nil {
				break
			}
			group += string(e)
		}
		if group == "" {
			break
		}
		elems = append(elems, group)
	}
	slices.Sort(elems)
	return hdr + strings.Join(elems, "")
}

// The modes fail where the server is wrong: a pair split apart, a wrong length, a sign slip.
func TestReplyModes(t *testing.T) {
	f := func(mode, line, got, want string, match bool) {
		t.Helper()
		s := step{mode: mode, line: line, args: splitInline(t, line)}
		if m := replyMatches(t, s, got, want); m != match {
			t.Errorf("%s %s: %q against %q matched %v, want %v", mode, line, got, want, m, match)
		}
	}
	pairs := "*4\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n"
	swapped := "*4\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\na\r\n$1\r\n1\r\n"
	crossed := "*4\r\n$1\r\na\r\n$1\r\n2\r\n$1\r\nb\r\n$1\r\n1\r\n"
	f(">*", "HGETALL h", swapped, pairs, true)
	f(">*", "HGETALL h", crossed, pairs, false)
	f(">*", "CONFIG GET *", crossed, pairs, false)
	f(">*", "HRANDFIELD h -4 WITHVALUES", crossed, pairs, false)
	f(">*", "SMEMBERS s", crossed, pairs, true) // members, not pairs
	m := "%2\r\n$1\r\na\r\n:1\r\n$1\r\nb\r\n:2\r\n"
	f(">*", "HELLO 3", "%2\r\n$1\r\nb\r\n:2\r\n$1\r\na\r\n:1\r\n", m, true)
	f(">*", "HELLO 3", "%2\r\n$1\r\na\r\n:2\r\n$1\r\nb\r\n:1\r\n", m, false)
	f(">~", "SRANDMEMBER s 3", "*3\r\n$1\r\nx\r\n$1\r\ny\r\n$1\r\nz\r\n", "*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n", true)
	f(">~", "SRANDMEMBER s 3", "*2\r\n$1\r\nx\r\n$1\r\ny\r\n", "*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n", false)
	f(">~", "TTL k", ":99\r\n", ":100\r\n", true)
	f(">~", "TTL k", ":-1\r\n", ":100\r\n", false)
	f(">~", "TTL k", ":0\r\n", ":100\r\n", false)
	f(">~", "GET k", "$2\r\nab\r\n", "$3\r\nabc\r\n", true)
	f(">~", "GET k", "$-1\r\n", "$3\r\nabc\r\n", true) // both bulk: a nil needs an exact step
}

// recordTranscript runs steps against a fresh redis-server and rewrites path with its replies.
func recordTranscript(t *testing.T, path string, steps []step, proto int, sync bool) {
	addr, stop := startRedisAddr(t)
	defer stop()
	type rconn struct {
		c  net.Conn
		r  *bufio.Reader
		id string
	}
	conns := map[string]*rconn{}
	read := func(rc *rconn, wait time.Duration) ([]byte, error) {
		rc.c.SetReadDeadline(time.Now().Add(wait))
		return resptest.ReadRaw(rc.r)
	}
	conn := func(name string) *rconn {
		if conns[name] == nil {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			rc := &rconn{c: c, r: bufio.NewReader(c)}
			c.Write(encodeArgs([][]byte{[]byte("CLIENT"), []byte("ID")}))
			raw, err := read(rc, 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			rc.id = strings.TrimSuffix(string(raw[1:]), "\r\n")
			if proto == 3 {
				c.Write(encodeArgs([][]byte{[]byte("HELLO"), []byte("3")}))
				if _, err := read(rc, 10*time.Second); err != nil {
					t.Fatal(err)
				}
			}
			conns[name] = rc
		}
		return conns[name]
	}
	defer func() {
		for _, rc := range conns {
			rc.c.Close()
		}
	}()
	ids := func(name string) string { return conn(name).id }
	var out strings.Builder
	for _, s := range steps {
		rc := conn(s.conn)
		if s.mode != "<" {
			rc.c.Write(encodeArgs(withIDs(s.args, ids)))
		}
		var reply []byte
		for wait := 10 * time.Second; ; wait = syncQuiet {
			if sync && len(reply) == 0 {
				wait = syncQuiet
			}
			raw, err := read(rc, wait)
			if err != nil && sync && errors.Is(err, os.ErrDeadlineExceeded) && len(raw) == 0 {
				break // quiet: the step has no more replies
			}
			if err != nil {
				t.Fatalf("%s: %v", s.header(), err)
			}
			reply = append(reply, raw...)
			if !sync {
				break
			}
		}
		fmt.Fprintf(&out, "%s%s\n%s", s.comment, s.header(), strings.ReplaceAll(string(reply), "\r\n", "\n"))
	}
	if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// syncQuiet is how long a "## sync" recording waits for a step's next reply before it takes
// the step to have no more: Redis writes every client's replies and pushes of one event-loop pass
// together, so those of a step arrive well within it.
const syncQuiet = 200 * time.Millisecond

// withIDs replaces {id:name} in args with the client id of connection name on the server at hand
// (CLIENT TRACKING … REDIRECT {id:s}).
func withIDs(args [][]byte, id func(name string) string) [][]byte {
	out := args
	for i, a := range args {
		start := bytes.Index(a, []byte("{id:"))
		if start < 0 {
			continue
		}
		end := bytes.IndexByte(a[start:], '}')
		if end < 0 {
			continue
		}
		if &out[0] == &args[0] {
			out = slices.Clone(args)
		}
		name := string(a[start+4 : start+end])
		out[i] = slices.Concat(a[:start], []byte(id(name)), a[start+end+1:])
	}
	return out
}

// startRedis starts a throwaway redis-server on a free loopback port and connects to it.
func startRedis(t testing.TB) (net.Conn, func()) {
	t.Helper()
	addr, stop := startRedisAddr(t)
	for i := 0; i < 100; i++ {
		conn, err := net.Dial("tcp", addr)
		if err == nil {
			return conn, func() { conn.Close(); stop() }
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	t.Fatal("redis-server did not start")
	return nil, nil
}

// startRedisAddr starts a throwaway redis-server on a free loopback port and returns its address
// once it accepts connections.
func startRedisAddr(t testing.TB) (string, func()) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not on PATH: cannot record transcripts")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir := t.TempDir()
	cmd := exec.Command(bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", dir, "--enable-debug-command", "yes")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stop := func() { cmd.Process.Kill(); cmd.Wait() }
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for i := 0; i < 100; i++ {
		conn, err := net.Dial("tcp", addr)
		if err == nil {
			conn.Close()
			return addr, stop
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	t.Fatal("redis-server did not start")
	return "", nil
}
