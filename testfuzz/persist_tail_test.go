package testfuzz

// Torn and corrupt AOF tails written by hand into an AOF directory the server itself wrote.

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// tailKeys are the SETs written before the file is damaged.
const tailKeys = 200

// aofTails: the server (redis-server, proving the harness, and the hotkv binary)
// writes an AOF of 200 SETs and stops; then, on copies of its directory:
//   - a command torn at the end of the last incremental file, with aof-load-truncated yes: the
//     server starts, logs the truncation, has every whole command's key and not the torn one,
//     and appends after the cut (a later SET survives another restart);
//   - the same with aof-load-truncated no: the server refuses to start (exits, never answers);
//   - a byte of the file's middle changed ('$' to '!'): it refuses with either setting, logging
//     "Bad file format".
func aofTails(t *testing.T, kind, bin string) {
	orig := t.TempDir()
	p := startProc(t, bin, orig, "--appendonly", "yes", "--appendfsync", "always")
	p.ready(30 * time.Second)
	c := dial(t, p.addr)
	for i := range tailKeys {
		c.do("SET", "t:"+strconv.Itoa(i), strings.Repeat("v", i))
	}
	c.write(appendCommand(nil, "SHUTDOWN", "NOSAVE"))
	c.readUntilClosed(30 * time.Second)
	if !p.waitExit(30 * time.Second) {
		t.Fatal("no exit after SHUTDOWN")
	}
	t.Run("torn/yes", func(t *testing.T) { tornTail(t, bin, orig, true) })
	t.Run("torn/no", func(t *testing.T) { tornTail(t, bin, orig, false) })
	for _, truncated := range []string{"yes", "no"} {
		t.Run("corrupt/"+truncated, func(t *testing.T) { corruptMiddle(t, bin, orig, truncated) })
	}
}

// lastIncr returns the path of the manifest's last incremental file under dir.
func lastIncr(t *testing.T, dir string) string {
	t.Helper()
	aofDir := filepath.Join(dir, "appendonlydir")
	m, err := os.ReadFile(filepath.Join(aofDir, "appendonly.aof.manifest"))
	if err != nil {
		t.Fatal(err)
	}
	name := ""
	for _, line := range strings.Split(string(m), "\n") {
		f := strings.Fields(line)
		if len(f) == 6 && f[0] == "file" && f[4] == "type" && f[5] == "i" {
			name = f[1]
		}
	}
	if name == "" {
		t.Fatalf("no incremental file in the manifest:\n%s", m)
	}
	return filepath.Join(aofDir, name)
}

func appendFile(t *testing.T, path string, b []byte) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

func tornTail(t *testing.T, bin, orig string, truncated bool) {
	dir := t.TempDir()
	copyTree(t, orig, dir)
	incr := lastIncr(t, dir)
	whole, _ := os.Stat(incr)
	torn := appendCommand(nil, "SET", "torn", "never loaded")
	appendFile(t, incr, torn[:len(torn)-7])
	args := []string{"--appendonly", "yes", "--aof-load-truncated", map[bool]string{true: "yes", false: "no"}[truncated]}
	p := startProc(t, bin, dir, args...)
	if !truncated {
		refuses(t, p, "aof-load-truncated")
		return
	}
	p.ready(30 * time.Second)
	if log := p.out.String(); !strings.Contains(log, "aof-load-truncated is enabled") {
		t.Errorf("%s logged no truncation:\n%s", p.name, tail(log, 2000))
	}
	c := dial(t, p.addr)
	checkTailKeys(t, p.name, c)
	if got := c.do("EXISTS", "torn"); got != ":0\r\n" {
		t.Errorf("%s loaded the torn command: EXISTS torn %s", p.name, quote(got))
	}
	if st, _ := os.Stat(incr); st.Size() < whole.Size() {
		t.Errorf("%s cut the file to %d bytes, below the %d of its whole commands", p.name, st.Size(), whole.Size())
	}
	c.do("SET", "after", "cut")
	p.term(30 * time.Second)
	p2 := startProc(t, bin, dir, "--appendonly", "yes", "--aof-load-truncated", "no")
	p2.ready(30 * time.Second)
	c2 := dial(t, p2.addr)
	checkTailKeys(t, p2.name+" restarted", c2)
	if got := c2.do("GET", "after"); got != bulk("cut") {
		t.Errorf("%s: a SET after the cut is lost on restart: %s", p2.name, quote(got))
	}
}

// checkTailKeys checks the keys written before the damage.
func checkTailKeys(t *testing.T, what string, c *rawConn) {
	t.Helper()
	for i := range tailKeys {
		if got, want := c.do("GET", "t:"+strconv.Itoa(i)), bulk(strings.Repeat("v", i)); got != want {
			t.Fatalf("%s: t:%d is %s", what, i, quote(got))
		}
	}
}

func corruptMiddle(t *testing.T, bin, orig, truncated string) {
	dir := t.TempDir()
	copyTree(t, orig, dir)
	incr := lastIncr(t, dir)
	b, err := os.ReadFile(incr)
	if err != nil {
		t.Fatal(err)
	}
	// A bulk length's '$' from the middle on, else the last one before it: when the second
	// half lies inside one long value (a rewrite left few commands in the file), IndexByte's -1
	// put the '!' in the value, a valid file that loaded (the damage test then failed once).
	at := len(b)/2 + bytes.IndexByte(b[len(b)/2:], '$')
	if at < len(b)/2 {
		at = bytes.LastIndexByte(b[:len(b)/2], '$')
	}
	if at < 0 {
		t.Fatalf("no bulk length in %s", incr)
	}
	b[at] = '!'
	if err := os.WriteFile(incr, b, 0o644); err != nil {
		t.Fatal(err)
	}
	p := startProc(t, bin, dir, "--appendonly", "yes", "--aof-load-truncated", truncated)
	refuses(t, p, "Bad file format")
}

// refuses checks that the server exits with an error without ever answering PONG, and logs
// what.
func refuses(t *testing.T, p *proc, what string) {
	t.Helper()
	if err := waitPong(p.addr, 30*time.Second, p.exited); err == nil {
		t.Fatalf("%s started on a damaged AOF", p.name)
	}
	if !p.waitExit(10 * time.Second) {
		t.Fatalf("%s neither started nor exited", p.name)
	}
	if p.err == nil {
		t.Errorf("%s exited with status 0 on a damaged AOF", p.name)
	}
	if log := p.out.String(); !strings.Contains(log, what) {
		t.Errorf("%s's log does not say %q:\n%s", p.name, what, tail(log, 2000))
	}
}
