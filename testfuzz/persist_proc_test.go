package testfuzz

// Processes and nodes for the persistence tests (persist_*_test.go): redis-server 7.0.15 and
// the built hotkv binary as children on this part's loopback ports (7250-7279), killed by their
// process group's id, and in-process HotKV servers, behind one node type.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hotkv/hotkv/src/server"
)

// persistPorts are the loopback ports these tests may bind.
var persistPorts = portRange{lo: 7250, hi: 7279}

// packageDir is this package's directory, read before any test runs: an in-process server's
// dir directive changes the process's working directory (os.Chdir, as Redis does), to a test's
// temporary directory that is removed when that test ends.
var packageDir, _ = os.Getwd()

// buildHotKV builds ./src/cmd/hotkv into a temporary directory and returns the binary's path.
// It skips under -short: these are the slow, process-level tests.
func buildHotKV(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: skipping the tests that build and run the hotkv binary")
	}
	bin := filepath.Join(t.TempDir(), "hotkv")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/hotkv/hotkv/src/cmd/hotkv")
	cmd.Dir = packageDir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestPersistProcesses runs the tests that need real processes (kill -9 by process group,
// SIGTERM, a refusal to start) against redis-server 7.0.15, which proves each harness, and
// against one hotkv binary built for all of them (skipped under -short):
// CrashAcknowledged, CrashDuringBgsave, AOFTails, SigtermSave.
func TestPersistProcesses(t *testing.T) {
	if raceEnabled {
		t.Skip("-race: every server here is a child process built without it, so the detector sees nothing; run without -race")
	}
	bins := map[string]string{"hotkv": buildHotKV(t), "redis": "redis-server"}
	for _, tc := range []struct {
		name string
		f    func(t *testing.T, kind, bin string)
	}{
		{"CrashAcknowledged", crashAcknowledged},
		{"CrashDuringBgsave", crashDuringBgsave},
		{"AOFTails", aofTails},
		{"SigtermSave", sigtermSave},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, kind := range persistKinds {
				t.Run(kind, func(t *testing.T) {
					t.Parallel()
					if !haveRedis() {
						t.Skip("redis-server not on PATH: install redis-server 7.0.15 (every test here also uses it)")
					}
					tc.f(t, kind, bins[kind])
				})
			}
		})
	}
}

// lockedBuffer collects a child's output.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// proc is a server running as a child process in its own process group.
type proc struct {
	t      testing.TB
	name   string // "redis" or "hotkv"
	addr   string
	cmd    *exec.Cmd
	out    *lockedBuffer
	exited chan struct{}
	err    error // the exit status, once exited is closed
}

// startProc runs bin (redis-server or a hotkv binary) with its files in dir and the given extra
// options on a port of this part's range, and kills it when the test ends. It does not wait for
// the server to answer; see ready.
func startProc(t testing.TB, bin, dir string, args ...string) *proc {
	t.Helper()
	name := "hotkv"
	if filepath.Base(bin) == "redis-server" {
		name = "redis"
	}
	port := persistPorts.free(t)
	all := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
		"--daemonize", "no", "--dir", dir, "--logfile", ""}, args...)
	p := &proc{t: t, name: name, addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		cmd: exec.Command(bin, all...), out: &lockedBuffer{}, exited: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.Dir = dir
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(p.kill)
	return p
}

// startRedisProc is startProc for redis-server, skipping the test when it is not installed.
func startRedisProc(t testing.TB, dir string, args ...string) *proc {
	t.Helper()
	if !haveRedis() {
		t.Skip("redis-server not on PATH: install redis-server 7.0.15 to run the persistence round trips")
	}
	p := startProc(t, "redis-server", dir, args...)
	p.ready(30 * time.Second)
	return p
}

// ready waits until the server answers PING with PONG (not -LOADING), failing the test when it
// exits or does not within d.
func (p *proc) ready(d time.Duration) {
	p.t.Helper()
	if err := waitPong(p.addr, d, p.exited); err != nil {
		p.t.Fatalf("%s on %s: %v\n%s", p.name, p.addr, err, tail(p.out.String(), 3000))
	}
}

// waitPong polls addr with PING until +PONG, until exited is closed or d has passed.
func waitPong(addr string, d time.Duration, exited <-chan struct{}) error {
	var last string
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		select {
		case <-exited:
			return errors.New("exited before answering PONG")
		default:
		}
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			last = err.Error()
			continue
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		c.Write([]byte("PING\r\n"))
		buf := make([]byte, 256)
		n, _ := c.Read(buf)
		c.Close()
		last = string(buf[:n])
		if last == "+PONG\r\n" {
			return nil
		}
	}
	return fmt.Errorf("no PONG within %v (last: %q)", d, last)
}

// kill ends the process group at once (SIGKILL), as a crash does, and waits for the exit.
func (p *proc) kill() {
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.exited
}

// term sends SIGTERM (both servers then write what they owe and exit) and waits up to d.
func (p *proc) term(d time.Duration) {
	p.t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	if !p.waitExit(d) {
		p.t.Errorf("%s did not exit within %v of SIGTERM\n%s", p.name, d, tail(p.out.String(), 2000))
		p.kill()
	}
}

// waitExit reports whether the process has exited within d.
func (p *proc) waitExit(d time.Duration) bool {
	select {
	case <-p.exited:
		return true
	case <-time.After(d):
		return false
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// redisOnlyUnderRace skips a Redis-to-Redis case (it proves the harness, and has no HotKV code
// for the race detector to watch) under -race, where it would only cost time.
func redisOnlyUnderRace(t *testing.T, kinds ...string) {
	for _, k := range kinds {
		if k != "redis" {
			return
		}
	}
	if raceEnabled {
		t.Skip("-race: a Redis-only case checks the harness; it runs without -race")
	}
}

// onlyWithoutRace skips a variant under -race, where the instrumented in-process server is
// several times slower: the variant's code paths are the same as a sibling's that still runs,
// and the whole set must stay within minutes.
func onlyWithoutRace(t *testing.T, skip bool) {
	if raceEnabled && skip {
		t.Skip("-race: a variant of a case that runs here too; it runs without -race")
	}
}

// node is a server under test: a child process or an in-process HotKV.
type node struct {
	kind string // "redis" or "hotkv"
	addr string
	dir  string
	p    *proc          // child process, or nil
	srv  *server.Server // in-process HotKV, or nil
}

// startDirMu serializes in-process starts with a dir, up to the first PONG: loading the dir
// directive is chdir, then getwd (as Redis), so two servers loading their configurations at
// once in one process could each take the other's directory (seen: a server renaming its
// manifest in another test's dir); and netpoll v0.7.2 starts its poll manager on first use
// without synchronization (-race: poll_manager.go:88 against :114 when two servers start at once).
var startDirMu sync.Mutex

// startNode starts kind ("redis": redis-server; "hotkv": in-process) with its files in dir and
// waits until it has loaded them and answers PONG.
func startNode(t *testing.T, kind, dir string, args ...string) *node {
	t.Helper()
	if kind == "redis" {
		p := startRedisProc(t, dir, args...)
		return &node{kind: kind, addr: p.addr, dir: dir, p: p}
	}
	all := append([]string{"--save", "", "--dir", dir}, args...)
	startDirMu.Lock()
	addr, s := startHotKV(t, all...)
	err := waitPong(addr, 60*time.Second, s.Done())
	startDirMu.Unlock()
	if err != nil {
		t.Fatalf("HotKV on %s: %v", dir, err)
	}
	return &node{kind: kind, addr: addr, dir: dir, srv: s}
}

// stop ends the node the way a user would (SIGTERM, or Stop in-process).
func (n *node) stop(t *testing.T) {
	t.Helper()
	if n.p != nil {
		n.p.term(30 * time.Second)
		return
	}
	n.srv.Stop()
}

// shutdown sends SHUTDOWN with args and waits for the node to end.
func (n *node) shutdown(t *testing.T, args ...string) {
	t.Helper()
	c := dial(t, n.addr)
	c.write(appendCommand(nil, append([]string{"SHUTDOWN"}, args...)...))
	if got, err := c.readUntilClosed(30 * time.Second); err != nil || got != "" {
		t.Fatalf("%s SHUTDOWN %v: got %q, %v", n.kind, args, got, err)
	}
	if n.p != nil {
		if !n.p.waitExit(30 * time.Second) {
			t.Fatalf("%s did not exit after SHUTDOWN", n.kind)
		}
		return
	}
	select {
	case <-n.srv.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("HotKV did not stop after SHUTDOWN")
	}
	n.srv.Stop() // waits for background work to end
}

// copyTree copies the regular files under src into dst, keeping their relative paths.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() || strings.HasPrefix(d.Name(), "temp-") {
			return nil
		}
		return copyFile(path, target)
	})
	if err != nil {
		t.Fatalf("copy %s to %s: %v", src, dst, err)
	}
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
