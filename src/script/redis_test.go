package script

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hotkv/hotkv/net/resp"
	"github.com/hotkv/hotkv/net/resp/resptest"
)

// The reference: a redis-server 7.0.15 this test binary starts on loopback (ports 7201-7209)
// and stops in TestMain. Without redis-server on PATH the differential tests skip.

var live struct {
	once sync.Once
	addr string
	cmd  *exec.Cmd
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if live.cmd != nil {
		live.cmd.Process.Kill()
		live.cmd.Wait()
	}
	os.Exit(code)
}

// redisAddr starts (once) the reference server and returns its address, or skips t.
func redisAddr(t testing.TB) string {
	t.Helper()
	if tryRedis() == "" {
		t.Skipf("no reference redis-server: %v", live.err)
	}
	return live.addr
}

// tryRedis starts (once) the reference server and returns its address, "" without one.
func tryRedis() string {
	live.once.Do(func() {
		path, err := exec.LookPath("redis-server")
		if err != nil {
			live.err = err
			return
		}
		for port := 7201; port <= 7209; port++ {
			addr := "127.0.0.1:" + strconv.Itoa(port)
			if c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond); err == nil {
				c.Close()
				continue // taken
			}
			cmd := exec.Command(path, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
				"--appendonly", "no", "--daemonize", "no", "--loglevel", "warning")
			dieWithTest(cmd)
			if err := cmd.Start(); err != nil {
				live.err = err
				return
			}
			for i := 0; i < 100; i++ {
				if c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond); err == nil {
					c.Close()
					live.addr, live.cmd = addr, cmd
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
			cmd.Process.Kill()
			cmd.Wait()
		}
		live.err = fmt.Errorf("no free port for redis-server")
	})
	return live.addr
}

// conn is a plain RESP connection to the reference server in one protocol.
type conn struct {
	c net.Conn
	r *bufio.Reader
}

func dial(t testing.TB, proto int) *conn {
	t.Helper()
	c, err := net.Dial("tcp", redisAddr(t))
	if err != nil {
		t.Fatal(err)
	}
	cn := &conn{c: c, r: bufio.NewReader(c)}
	t.Cleanup(func() { c.Close() })
	if proto == 3 {
		cn.do(t, "HELLO", "3")
	}
	return cn
}

// do sends one command and returns the raw reply bytes.
func (cn *conn) do(t testing.TB, args ...string) []byte {
	t.Helper()
	b := make([][]byte, len(args))
	for i, a := range args {
		b[i] = []byte(a)
	}
	reply, err := cn.doBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	return reply
}

func (cn *conn) doBytes(args [][]byte) ([]byte, error) {
	var req []byte
	req = append(req, '*')
	req = strconv.AppendInt(req, int64(len(args)), 10)
	req = append(req, '\r', '\n')
	for _, a := range args {
		req = resp.AppendBulk(req, a)
	}
	cn.c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := cn.c.Write(req); err != nil {
		return nil, err
	}
	return resp.ReadReply(cn.r)
}

// redisHost is a Host that forwards every redis.call to the reference server, on a RESP2 or a
// RESP3 connection as the script chose, and describes commands from its COMMAND INFO.
type redisHost struct {
	t     testing.TB
	c2    *conn
	c3    *conn
	info  map[string]cmdInfo
	logs  []string
	calls int
}

type cmdInfo struct {
	arity int
	flags map[string]bool
}

func newRedisHost(t testing.TB) *redisHost {
	return &redisHost{t: t, c2: dial(t, 2), c3: dial(t, 3), info: map[string]cmdInfo{}}
}

func (h *redisHost) lookup(name string) (cmdInfo, bool) {
	name = strings.ToLower(name)
	if ci, ok := h.info[name]; ok {
		return ci, ci.arity != 0
	}
	raw := h.c2.do(h.t, "COMMAND", "INFO", name)
	v, err := resptest.Parse(raw)
	if err != nil || len(v.Elems) != 1 || v.Elems[0].Null {
		h.info[name] = cmdInfo{}
		return cmdInfo{}, false
	}
	e := v.Elems[0].Elems
	arity, _ := strconv.Atoi(e[1].Str)
	ci := cmdInfo{arity: arity, flags: map[string]bool{}}
	for _, f := range e[2].Elems {
		ci.flags[f.Str] = true
	}
	h.info[name] = ci
	return ci, true
}

func (h *redisHost) Command(args [][]byte) Command {
	ci, ok := h.lookup(string(args[0]))
	if !ok {
		return 0
	}
	c := CommandKnown
	if (ci.arity > 0 && len(args) == ci.arity) || (ci.arity < 0 && len(args) >= -ci.arity) {
		c |= CommandArityOK
	}
	if ci.flags["write"] {
		c |= CommandWrite
	}
	if ci.flags["noscript"] {
		c |= CommandNoScript
	}
	return c
}

func (h *redisHost) Call(args [][]byte, proto int, _ Repl, dst []byte) []byte {
	h.calls++
	c := h.c2
	if proto == 3 {
		c = h.c3
	}
	reply, err := c.doBytes(args)
	if err != nil {
		h.t.Fatal(err)
	}
	return append(dst, reply...)
}

func (h *redisHost) Allowed([][]byte) bool { return true }

func (h *redisHost) Log(level int, msg string) {
	h.logs = append(h.logs, strconv.Itoa(level)+" "+msg)
}
