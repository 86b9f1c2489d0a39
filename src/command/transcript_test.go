package command

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/net/resp"
)

// Transcripts: testdata/<family>.txt holds commands and the exact RESP2 replies of Redis 7.0.15;
// testdata/<family>.resp3.txt the same commands after HELLO 3. `go test ./src/command -run
// Transcript -update` re-records both from a redis-server on PATH.
//
// Format: a line "> CMD args" (inline syntax, quotes allowed) starts a step; the lines after it,
// up to the next step, are the reply with CRLF written as a newline. ">* " compares an array's
// elements ignoring order; ">~ " compares only the reply's type. Lines starting "## " are comments.
var update = flag.Bool("update", false, "re-record transcripts from redis-server")

type step struct {
	mode    string // ">", ">*" or ">~"
	line    string
	args    [][]byte
	comment string // comment lines before the step
	want    string
}

func parseTranscript(t *testing.T, data []byte) []step {
	var steps []step
	var comment strings.Builder
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		mode, rest, isCmd := cutStep(line)
		switch {
		case isCmd:
			args := splitInline(t, rest)
			steps = append(steps, step{mode: mode, line: rest, args: args, comment: comment.String()})
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

func cutStep(line string) (mode, rest string, ok bool) {
	for _, m := range []string{">* ", ">~ ", "> "} {
		if r, found := strings.CutPrefix(line, m); found {
			return strings.TrimSpace(m), r, true
		}
	}
	return "", "", false
}

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
			f3 := strings.TrimSuffix(f, ".txt") + ".resp3.txt"
			if *update {
				recordTranscript(t, f, steps, 2)
				recordTranscript(t, f3, steps, 3)
				return
			}
			t.Run("resp2", func(t *testing.T) { checkTranscript(t, steps, 2) })
			data3, err := os.ReadFile(f3)
			if err != nil {
				t.Fatalf("missing RESP3 transcript (run with -update): %v", err)
			}
			t.Run("resp3", func(t *testing.T) { checkTranscript(t, parseTranscript(t, data3), 3) })
		})
	}
}

func checkTranscript(t *testing.T, steps []step, proto int) {
	e := newTestEngine()
	tc := newTestConn(t, e)
	if proto == 3 {
		tc.do("HELLO", "3")
	}
	for i, s := range steps {
		out, _ := tc.send(encodeArgs(s.args))
		if !replyMatches(t, s.mode, string(out), s.want) {
			t.Errorf("step %d: %s\n got: %q\nwant: %q", i+1, s.line, out, s.want)
		}
	}
}

func replyMatches(t *testing.T, mode, got, want string) bool {
	switch mode {
	case ">~":
		return len(got) > 0 && len(want) > 0 && got[0] == want[0]
	case ">*":
		return sortedElems(t, got) == sortedElems(t, want)
	}
	return got == want
}

// sortedElems returns an array reply's header and its elements sorted.
func sortedElems(t *testing.T, raw string) string {
	r := bufio.NewReader(strings.NewReader(raw))
	hdr, err := r.ReadString('\n')
	if err != nil || len(hdr) == 0 || !strings.ContainsRune("*~%", rune(hdr[0])) {
		return raw
	}
	var elems []string
	for {
		e, err := resp.ReadReply(r)
		if err != nil {
			break
		}
		elems = append(elems, string(e))
	}
	slices.Sort(elems)
	return hdr + strings.Join(elems, "")
}

// recordTranscript runs steps against a fresh redis-server and rewrites path with its replies.
func recordTranscript(t *testing.T, path string, steps []step, proto int) {
	conn, stop := startRedis(t)
	defer stop()
	r := bufio.NewReader(conn)
	if proto == 3 {
		conn.Write(encodeArgs([][]byte{[]byte("HELLO"), []byte("3")}))
		if _, err := resp.ReadReply(r); err != nil {
			t.Fatal(err)
		}
	}
	var out strings.Builder
	for _, s := range steps {
		conn.Write(encodeArgs(s.args))
		conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		reply, err := resp.ReadReply(r)
		if err != nil {
			t.Fatalf("%s: %v", s.line, err)
		}
		fmt.Fprintf(&out, "%s%s %s\n%s", s.comment, s.mode, s.line, strings.ReplaceAll(string(reply), "\r\n", "\n"))
	}
	if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// startRedis starts a throwaway redis-server on a free loopback port.
func startRedis(t testing.TB) (net.Conn, func()) {
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
	for i := 0; i < 100; i++ {
		conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			return conn, func() { conn.Close(); stop() }
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	t.Fatal("redis-server did not start")
	return nil, nil
}
