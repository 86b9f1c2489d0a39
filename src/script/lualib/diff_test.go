package lualib

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// The differential test runs every snippet of testdata/diff/*.lua (one a
// line) through EVAL on a redis-server 7.0.15 and through a plain gopher-lua
// state with these libraries opened, and compares the two results: the
// returned string, or the error message with Redis's EVAL wrapper removed.
// Without a redis-server on PATH it compares against the .golden files
// that -update records from one.

var update = flag.Bool("update", false, "rewrite testdata/diff/*.golden from a live redis-server")

// prelude is put before every snippet on the same line, so that errors
// keep saying user_script:1. hex and R describe values without tostring
// (gopher-lua prints numbers differently from Lua 5.1's %.14g); numbers
// go through %.17g, which both format alike except inf and nan.
const prelude = `local function hex(s) return (string.gsub(s, '.', function(c) return string.format('%02x', string.byte(c)) end)) end ` +
	`local function num(n) if n ~= n then return 'nan' elseif n == 1/0 then return 'inf' elseif n == -1/0 then return '-inf' end return string.format('%.17g', n) end ` +
	`local D; D = function(v) local t = type(v) if t == 'number' then return num(v) elseif t == 'string' then return 's:' .. hex(v) elseif t == 'table' then local ks = {} for k, x in pairs(v) do ks[#ks+1] = D(k) .. '=' .. D(x) end table.sort(ks) return '{' .. table.concat(ks, ',') .. '}' elseif v == cjson.null then return 'null' elseif t == 'boolean' or t == 'nil' then return tostring(v) else return t end end ` +
	`local function R(...) local o = {} for i = 1, select('#', ...) do o[i] = D((select(i, ...))) end return select('#', ...) .. ':' .. table.concat(o, ' ') end ` +
	`local NZ = -(tonumber('0')) local INF = 1/0 local NAN = tonumber('0')/tonumber('0') `

type diffCase struct {
	file string
	line int
	code string
}

func loadDiffCases(t *testing.T) (map[string][]diffCase, []string) {
	files, err := filepath.Glob("testdata/diff/*.lua")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata/diff/*.lua: %v", err)
	}
	cases := map[string][]diffCase{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range strings.Split(string(b), "\n") {
			if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "--") {
				continue
			}
			cases[f] = append(cases[f], diffCase{f, i + 1, l})
		}
	}
	return cases, files
}

// runGopher runs one snippet in a fresh state, as EVAL runs it in Redis
// (chunk name user_script), and returns "S:" and the string, or "E:" and
// the error message.
func runGopher(code string, argv ...string) string {
	// Lua 5.1 lets a C function hold 8000 stack slots and nests Lua calls
	// 200 deep in C but 20000 in Lua; gopher-lua's defaults are smaller,
	// so the engine (and this test) raise them.
	L := lua.NewState(lua.Options{CallStackSize: 20000, RegistrySize: 1024 * 20, RegistryMaxSize: 1024 * 1024, MinimizeStackMemory: true})
	defer L.Close()
	OpenReadOnly(L)
	args := L.NewTable()
	for i, a := range argv {
		args.RawSetInt(i+1, lua.LString(a))
	}
	L.SetGlobal("ARGV", args)
	fn, err := L.Load(strings.NewReader(prelude+code), "user_script")
	if err != nil {
		return "E:" + err.Error()
	}
	L.Push(fn)
	if err := L.PCall(0, 1, nil); err != nil {
		var ae *lua.ApiError
		if errors.As(err, &ae) {
			return "E:" + ae.Object.String()
		}
		return "E:" + err.Error()
	}
	v := L.Get(-1)
	if s, ok := v.(lua.LString); ok {
		return "S:" + string(s)
	}
	return "T:" + v.Type().String()
}

var evalWrapper = regexp.MustCompile(`(?s)^(?:ERR )?(.*) script: [0-9a-f]{40}, on @user_script:\d+\.$`)

// redisResult turns an EVAL reply into runGopher's form.
func redisResult(kind byte, payload string) string {
	switch kind {
	case '$':
		return "S:" + payload
	case '-':
		if m := evalWrapper.FindStringSubmatch(payload); m != nil {
			return "E:" + m[1]
		}
		return "E(unwrapped):" + payload
	}
	return fmt.Sprintf("T(%c):%s", kind, payload)
}

func TestDifferential(t *testing.T) {
	cases, files := loadDiffCases(t)
	r := startRedis(t)
	total := 0
	for _, f := range files {
		golden := strings.TrimSuffix(f, ".lua") + ".golden"
		var want []string
		if r != nil {
			for _, c := range cases[f] {
				want = append(want, r.eval(t, prelude+c.code))
			}
			if !*update {
				checkGolden(t, golden, want)
			} else {
				var b strings.Builder
				for _, w := range want {
					b.WriteString(strconv.Quote(w) + "\n")
				}
				if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		} else {
			want = readGolden(t, golden)
			if len(want) != len(cases[f]) {
				t.Fatalf("%s has %d results for %d cases: run with -update beside a redis-server", golden, len(want), len(cases[f]))
			}
		}
		for i, c := range cases[f] {
			total++
			if got := runGopher(c.code); got != want[i] {
				t.Errorf("%s:%d: %s\n redis: %q\n  ours: %q", c.file, c.line, c.code, clip(want[i]), clip(got))
			}
		}
	}
	t.Logf("%d snippets compared (live redis: %v)", total, r != nil)
}

func readGolden(t *testing.T, path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no redis-server and no %s: %v", path, err)
	}
	var want []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		s, err := strconv.Unquote(l)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		want = append(want, s)
	}
	return want
}

// checkGolden reports a golden file that no longer says what the live
// server says, so that runs without one do not test stale answers.
func checkGolden(t *testing.T, path string, live []string) {
	if _, err := os.Stat(path); err != nil {
		t.Errorf("%s missing: run with -update", path)
		return
	}
	if old := readGolden(t, path); strings.Join(old, "\x00") != strings.Join(live, "\x00") {
		t.Errorf("%s differs from the live redis-server: run with -update", path)
	}
}

// redisConn is the least RESP client the test needs.
type redisConn struct {
	c net.Conn
	r *bufio.Reader
}

func lookRedis() (string, bool) {
	path, err := exec.LookPath("redis-server")
	return path, err == nil
}

func startRedis(t *testing.T) *redisConn {
	path, ok := lookRedis()
	if !ok {
		if *update {
			t.Fatal("-update needs redis-server on PATH")
		}
		return nil
	}
	for port := 7340; port < 7399; port++ {
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		if c, err := net.DialTimeout("tcp", addr, 50*time.Millisecond); err == nil {
			c.Close()
			continue
		}
		cmd := exec.Command(path, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--save", "", "--appendonly", "no", "--daemonize", "no")
		// A test binary that dies (timeout, fatal error) takes its server along.
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond); err == nil {
				return &redisConn{c: c, r: bufio.NewReader(c)}
			}
		}
		t.Fatalf("redis-server on %s did not start", addr)
	}
	t.Fatal("no free port in 7340-7398")
	return nil
}

func (r *redisConn) do(t *testing.T, args ...string) (byte, string) {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	_ = r.c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := r.c.Write([]byte(b.String())); err != nil {
		t.Fatal(err)
	}
	line, err := r.r.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	line = strings.TrimSuffix(line, "\r\n")
	kind, rest := line[0], line[1:]
	switch kind {
	case '$':
		n, _ := strconv.Atoi(rest)
		if n < 0 {
			return '_', ""
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r.r, buf); err != nil {
			t.Fatal(err)
		}
		return '$', string(buf[:n])
	case '*':
		n, _ := strconv.Atoi(rest)
		for i := 0; i < n; i++ {
			r.do0(t)
		}
		return '*', rest
	}
	return kind, rest
}

// do0 reads and drops one reply (elements of an array reply).
func (r *redisConn) do0(t *testing.T) {
	line, err := r.r.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	if line[0] == '$' {
		n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
		if n >= 0 {
			buf := make([]byte, n+2)
			_, _ = io.ReadFull(r.r, buf)
		}
	}
}

// eval runs a snippet on a freshly reset Lua VM (SCRIPT FLUSH recreates it
// in Redis 7.0), so that cjson settings one snippet changes do not leak.
func (r *redisConn) eval(t *testing.T, code string, argv ...string) string {
	if k, p := r.do(t, "SCRIPT", "FLUSH"); k != '+' {
		t.Fatalf("SCRIPT FLUSH: %c%s", k, p)
	}
	return redisResult(r.do(t, append([]string{"EVAL", code, "0"}, argv...)...))
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}
