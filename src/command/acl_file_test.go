package command

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/net/resp/resptest"
	"github.com/hotkv/hotkv/src/config"
)

// newACLFileEngine is a test engine whose aclfile is path, its users loaded from it.
func newACLFileEngine(t *testing.T, path string) *Engine {
	t.Helper()
	st, err := config.Load([]string{"--save", "", "--appendonly", "no", "--aclfile", path})
	if err != nil {
		t.Fatal(err)
	}
	e := newTestEngine()
	e.Config = testStore{st}
	if err := e.InitACL(nil); err != nil {
		t.Fatal(err)
	}
	return e
}

// An ACL file written by redis-server (ACL SAVE) loads in HotKV with the same users, and one
// written by HotKV loads in redis-server (ACL LOAD) with the same users.
func TestACLFileMovesBothWays(t *testing.T) {
	dir := t.TempDir()
	rpath := filepath.Join(dir, "redis.acl")
	if err := os.WriteFile(rpath, []byte("user default on nopass ~* &* +@all\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rs := startRedisIn(t, dir, "--aclfile", rpath)
	users := [][]string{
		{"alice", "on", ">pw1", ">pw2", "~app:*", "%R~cfg:*", "%W~log:*", "&news.*", "-@all", "+@read", "+@hash", "-hgetall", "+select|0", "+client|id"},
		{"bob", "on", "nopass", "allkeys", "allchannels", "+@all", "-@dangerous", "(~tmp:* +set +get)", "(%R~ro:* &x +@read)"},
		{"carol", "off", "#5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8", "skip-sanitize-payload", "+@all", "-flushall", "-config|set"},
		{"default", ">secret", "~*", "&*", "+@all", "-debug"},
		{"dave", "reset"},
	}
	for _, u := range users {
		if got := rs.do(append([]string{"ACL", "SETUSER"}, u...)...); got != "+OK\r\n" {
			t.Fatalf("redis SETUSER %v: %q", u, got)
		}
	}
	if got := rs.do("ACL", "SAVE"); got != "+OK\r\n" {
		t.Fatalf("redis ACL SAVE: %q", got)
	}
	redisFile, err := os.ReadFile(rpath)
	if err != nil {
		t.Fatal(err)
	}
	hpath := filepath.Join(t.TempDir(), "hotkv.acl")
	if err := os.WriteFile(hpath, redisFile, 0o644); err != nil {
		t.Fatal(err)
	}
	e := newACLFileEngine(t, hpath)
	tc := newTestConn(t, e)
	tc.do("AUTH", "secret")
	same := func(args ...string) {
		t.Helper()
		got, want := aclNorm(t, tc.do(args...), args), aclNorm(t, rs.do(args...), args)
		if got != want {
			t.Errorf("%q\nhotkv: %s\nredis: %s", args, got, want)
		}
	}
	same("ACL", "LIST")
	for _, u := range []string{"alice", "bob", "carol", "default", "dave"} {
		same("ACL", "GETUSER", u)
	}
	same("AUTH", "alice", "pw2")
	same("AUTH", "carol", "password")
	same("ACL", "WHOAMI")

	// The reverse: HotKV's users saved by HotKV, loaded by Redis.
	tc.do("AUTH", "default", "secret")
	rs.do("AUTH", "default", "secret")
	for _, u := range [][]string{
		{"erin", "on", ">e", "%RW~e:*", "%R~shared:*", "resetchannels", "&e.*", "-@all", "+@string", "+@list", "-lpop", "+get|x"},
		{"frank", "on", "nopass", "~*", "&*", "+@all", "-@admin", "+info", "(+get ~f:*)"},
	} {
		if got := tc.do(append([]string{"ACL", "SETUSER"}, u...)...); got != "+OK\r\n" {
			t.Fatalf("hotkv SETUSER %v: %q", u, got)
		}
		rs.do(append([]string{"ACL", "SETUSER"}, u...)...) // to compare what each describes
	}
	tc.do("ACL", "DELUSER", "dave")
	rs.do("ACL", "DELUSER", "dave")
	if got := tc.do("ACL", "SAVE"); got != "+OK\r\n" {
		t.Fatalf("hotkv ACL SAVE: %q", got)
	}
	want := aclNorm(t, rs.do("ACL", "LIST"), nil)
	hotkvFile, err := os.ReadFile(hpath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rpath, hotkvFile, 0o644); err != nil {
		t.Fatal(err)
	}
	rs.do("ACL", "SETUSER", "zed") // ACL LOAD replaces every user
	if got := rs.do("ACL", "LOAD"); got != "+OK\r\n" {
		t.Fatalf("redis ACL LOAD of HotKV's file: %q\n%s", got, hotkvFile)
	}
	rs.do("AUTH", "default", "secret")
	if got := aclNorm(t, rs.do("ACL", "LIST"), nil); got != want {
		t.Errorf("redis loading HotKV's file:\ngot  %s\nwant %s", got, want)
	}
	same("ACL", "LIST")
	// ACL LOAD replaces every user but default: their connections close, on both servers.
	erinH := newTestConn(t, e)
	erinH.do("AUTH", "erin", "e")
	erinR := startedConn(t, rs)
	erinR.do("AUTH", "erin", "e")
	tc.do("ACL", "LOAD")
	rs.do("ACL", "LOAD")
	if !erinH.stream.closed {
		t.Error("HotKV kept a connection of a user ACL LOAD replaced")
	}
	if got := erinR.doErr("PING"); got == nil {
		t.Error("Redis kept a connection of a user ACL LOAD replaced (the test's premise)")
	}
	same("AUTH", "erin", "e")
	same("ACL", "DRYRUN", "erin", "get", "x")
	same("ACL", "DRYRUN", "erin", "set", "shared:1", "v")
}

// ACL LOAD errors, and the config file's user lines, as Redis words them.
func TestACLFileErrors(t *testing.T) {
	dir := t.TempDir()
	rpath := filepath.Join(dir, "redis.acl")
	os.WriteFile(rpath, []byte("user default on nopass ~* &* +@all\n"), 0o644)
	rs := startRedisIn(t, dir, "--aclfile", rpath)
	hpath := filepath.Join(t.TempDir(), "redis.acl")
	os.WriteFile(hpath, []byte("user default on nopass ~* &* +@all\n"), 0o644)
	e := newACLFileEngine(t, hpath)
	tc := newTestConn(t, e)
	for _, text := range []string{
		"user alice on +bogus\n", "nouser x\n", "user\n", "user a b c\n", "user alice on\nuser alice off\n",
		"user bob (~a +get\n", "user a +nope1 b +nope2 c\n", "user a on\nbad line\nuser a off\n", "\n\n  user carol on ~x  \n", "user dan on #abc\n", "user eve on &* &x\n",
	} {
		os.WriteFile(rpath, []byte(text), 0o644)
		os.WriteFile(hpath, []byte(text), 0o644)
		got, want := tc.do("ACL", "LOAD"), rs.do("ACL", "LOAD")
		// The messages name the file: compare them with each side's path in place.
		if got != strings.ReplaceAll(want, rpath, hpath) {
			t.Errorf("ACL LOAD of %q:\nhotkv: %q\nredis: %q", text, got, want)
		}
		if g, w := aclNorm(t, tc.do("ACL", "LIST"), nil), aclNorm(t, rs.do("ACL", "LIST"), nil); g != w {
			t.Errorf("after ACL LOAD of %q:\nhotkv: %s\nredis: %s", text, g, w)
		}
	}
	os.Remove(hpath)
	if got := tc.do("ACL", "LOAD"); got[0] != '-' {
		t.Errorf("ACL LOAD of a missing file: %q", got)
	}

	lines := [][]string{{"alice", "on", ">x", "~a*", "+get", "(+set ~b)"}, {"default", "off", "+@all"}}
	args := []string{}
	for _, l := range lines {
		args = append(append(args, "--user"), l...)
	}
	rs2 := startRedisIn(t, t.TempDir(), args...)
	e2 := newTestEngine()
	if err := e2.InitACL(lines); err != nil {
		t.Fatal(err)
	}
	tc2 := newTestConn(t, e2)
	for _, cmd := range [][]string{{"GET", "a"}, {"AUTH", "alice", "x"}, {"ACL", "LIST"}, {"ACL", "WHOAMI"}} {
		if got, want := aclNorm(t, tc2.do(cmd...), cmd), aclNorm(t, rs2.do(cmd...), cmd); got != want {
			t.Errorf("config users, %q:\nhotkv: %s\nredis: %s", cmd, got, want)
		}
	}
	for _, lines := range [][][]string{{{"a", "+bogus"}}, {{"a"}, {"a"}}, {{"a", "(+get"}}} {
		if err := newTestEngine().InitACL(lines); err == nil {
			t.Errorf("InitACL(%q) accepted", lines)
		}
	}
}

// CONFIG REWRITE writes the users as user lines, as Redis does without an aclfile.
func TestACLConfigRewriteAgainstRedis(t *testing.T) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not on PATH")
	}
	conf := "user alice on >x ~a* +get\n# a comment\nsave \"\"\nappendonly no\n"
	rdir, hdir := t.TempDir(), t.TempDir()
	rconf, hconf := filepath.Join(rdir, "redis.conf"), filepath.Join(hdir, "redis.conf")
	os.WriteFile(rconf, []byte(conf), 0o644)
	os.WriteFile(hconf, []byte(conf), 0o644)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, rconf, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--dir", rdir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var rw *bufio.ReadWriter
	for range 100 {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			t.Cleanup(func() { c.Close() })
			c.SetDeadline(time.Now().Add(time.Minute))
			rw = bufio.NewReadWriter(bufio.NewReader(c), bufio.NewWriter(c))
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if rw == nil {
		t.Fatal("redis-server did not start")
	}
	// Loading dir changes the process's directory, as Redis does: t.Chdir first, so that the
	// tests after this one find testdata/ again (they failed with "no such file" before).
	t.Chdir(hdir)
	st, err := config.Load([]string{hconf, "--dir", hdir})
	if err != nil {
		t.Fatal(err)
	}
	e := newTestEngine()
	e.Config = testStore{st}
	st.SetUserLines(e.ACLUserLines)
	if err := e.InitACL(st.Users()); err != nil {
		t.Fatal(err)
	}
	tc := newTestConn(t, e)
	cmds := [][]string{{"ACL", "SETUSER", "bob", "on", "nopass", "%R~b*", "&c", "+@read", "(+set ~s)"},
		{"ACL", "SETUSER", "default", ">pw"}, {"AUTH", "pw"}, {"ACL", "DELUSER", "alice"}, {"CONFIG", "REWRITE"}}
	want := pipelined(t, rw, cmds)
	for i, c := range cmds {
		if got := tc.do(c...); got != want[i] {
			t.Errorf("%q: hotkv %q, redis %q", c, got, want[i])
		}
	}
	users := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "user ") {
				out = append(out, normRules(l))
			}
		}
		return strings.Join(out, "\n")
	}
	t.Logf("redis.conf user lines after CONFIG REWRITE:\n%s", users(rconf))
	if got, want := users(hconf), users(rconf); got != want {
		t.Errorf("user lines after CONFIG REWRITE:\nhotkv:\n%s\nredis:\n%s", got, want)
	}
}

// startedConn opens another connection to the redis-server rs runs on.
func startedConn(t *testing.T, rs *redisSession) *rawRedis {
	addr := rs.do("CONFIG", "GET", "port")
	port := strings.Split(addr, "\r\n")[4]
	c, err := net.Dial("tcp", "127.0.0.1:"+port)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(time.Minute))
	return &rawRedis{t: t, rw: bufio.NewReadWriter(bufio.NewReader(c), bufio.NewWriter(c))}
}

type rawRedis struct {
	t  *testing.T
	rw *bufio.ReadWriter
}

func (r *rawRedis) doErr(args ...string) error {
	r.rw.Write(encodeCommand(args))
	r.rw.Flush()
	_, err := resptest.ReadRaw(r.rw.Reader)
	return err
}

func (r *rawRedis) do(args ...string) {
	if err := r.doErr(args...); err != nil {
		r.t.Fatal(err)
	}
}
