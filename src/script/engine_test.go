package script

import (
	"fmt"
	"math/rand"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestCacheAgainstMap: random Compile, Lookup, Exists and Flush against a map of bodies as the
// reference.
func TestCacheAgainstMap(t *testing.T) {
	e := New(Config{})
	defer e.Close()
	ref := map[string]bool{} // sha -> cached
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 5000; i++ {
		body := "return " + strconv.Itoa(rng.Intn(50))
		sha := sha1Hex([]byte(body))
		switch op := rng.Intn(10); {
		case op < 5:
			s, errReply := e.Compile([]byte(body))
			if errReply != "" || s.SHA != sha {
				t.Fatalf("Compile(%q) = %v, %q", body, s, errReply)
			}
			ref[sha] = true
		case op < 9:
			upper := []byte(sha)
			if op == 8 {
				for j := range upper {
					if upper[j] >= 'a' {
						upper[j] -= 'a' - 'A'
					}
				}
			}
			s, ok := e.Lookup(upper)
			if ok != ref[sha] || (ok && s.SHA != sha) || e.Exists(upper) != ref[sha] {
				t.Fatalf("step %d: Lookup(%s) = %v %v, reference %v", i, upper, s, ok, ref[sha])
			}
		default:
			e.Flush()
			clear(ref)
		}
		if e.Len() != len(ref) {
			t.Fatalf("step %d: Len %d, reference %d", i, e.Len(), len(ref))
		}
	}
	for _, bad := range []string{"", "abc", "zz" + sha1Hex(nil)[2:], sha1Hex(nil) + "0"} {
		if e.Exists([]byte(bad)) {
			t.Errorf("Exists(%q)", bad)
		}
	}
}

// TestCacheConcurrent: goroutines compile, look up and run overlapping scripts while another
// flushes (run under -race). A script found is always the one asked for, and every run answers.
func TestCacheConcurrent(t *testing.T) {
	e := New(Config{})
	defer e.Close()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				e.Flush()
			}
		}
	}()
	var workers sync.WaitGroup
	for g := 0; g < 4; g++ {
		workers.Add(1)
		go func(g int) {
			defer workers.Done()
			h := newMemHost()
			for i := 0; i < 500; i++ {
				n := (i * (g + 1)) % 20
				body := fmt.Sprintf("return %d + tonumber(ARGV[1])", n)
				s, errReply := e.Compile([]byte(body))
				if errReply != "" {
					t.Error(errReply)
					return
				}
				if found, ok := e.Lookup([]byte(s.SHA)); ok && found.SHA != s.SHA {
					t.Errorf("Lookup(%s) found %s", s.SHA, found.SHA)
				}
				got := string(e.Run(nil, h, s, nil, [][]byte{[]byte("1")}, RunOptions{Proto: 2}))
				if want := ":" + strconv.Itoa(n+1) + "\r\n"; got != want {
					t.Errorf("%s: %q, want %q", body, got, want)
				}
			}
		}(g)
	}
	workers.Wait()
	close(stop)
	wg.Wait()
}

// TestCompileErrorNotCached: a body that does not compile leaves nothing in the cache.
func TestCompileErrorNotCached(t *testing.T) {
	e := New(Config{})
	defer e.Close()
	body := []byte("return +")
	if _, errReply := e.Compile(body); errReply == "" {
		t.Fatal("compiled")
	}
	if e.Exists([]byte(sha1Hex(body))) || e.Len() != 0 {
		t.Error("a failed compile was cached")
	}
}

// TestPoolReuse: sequential runs reuse one state (built once, its sandbox with it); runs that
// overlap get states of their own, and the pool keeps them for later.
func TestPoolReuse(t *testing.T) {
	e := New(Config{})
	defer e.Close()
	s, _ := e.Compile([]byte("return redis.call('INCR', KEYS[1])"))
	h := newMemHost()
	states := map[*state]bool{}
	for i := 0; i < 1000; i++ {
		e.Run(nil, h, s, [][]byte{[]byte("k")}, nil, RunOptions{Proto: 2})
		e.pool.each(func(sl *slot) {
			if sl.st != nil {
				states[sl.st] = true
			}
		})
	}
	if n := len(*e.pool.slots.Load()); len(states) > n {
		t.Errorf("%d states built for 1000 sequential runs over %d slots", len(states), n)
	}
	if got := string(e.Run(nil, h, s, [][]byte{[]byte("k")}, nil, RunOptions{Proto: 2})); got != ":1001\r\n" {
		t.Errorf("reply %q", got)
	}
	// A run inside a run (a Host that runs another script) needs a second state at once.
	inner := &nestedHost{memHost: newMemHost(), e: e, s: s}
	outer, _ := e.Compile([]byte("return redis.call('PING')"))
	if got := string(e.Run(nil, inner, outer, nil, nil, RunOptions{Proto: 2})); got != ":1\r\n" {
		t.Errorf("nested reply %q", got)
	}
	used := 0
	e.pool.each(func(sl *slot) {
		if sl.used.Load() {
			used++
		}
	})
	if used != 0 {
		t.Errorf("%d slots still taken after the runs", used)
	}
}

// nestedHost answers PING by running script s in the same engine: a second state must be taken
// while the first is busy.
type nestedHost struct {
	*memHost
	e *Engine
	s *Script
}

func (h *nestedHost) Call(args [][]byte, proto int, r Repl, dst []byte) []byte {
	return h.e.Run(dst, h.memHost, h.s, [][]byte{[]byte("n")}, nil, RunOptions{Proto: proto})
}

// TestSandboxHoldsAcrossRuns: whatever a script tries, the next script on the same state sees
// the pristine environment.
func TestSandboxHoldsAcrossRuns(t *testing.T) {
	e := New(Config{})
	defer e.Close()
	h := newMemHost()
	for _, attack := range []string{
		"x = 1", "redis = nil", "string.rep = nil", "rawset(_G, 'redis', 1)", "rawset(string, 'rep', 1)",
		"setmetatable(_G, {})", "getmetatable('').__index = {}", "KEYS[1] = 'evil'",
		"local mt = getmetatable(_G) mt.__index = nil", "table.insert = print",
		"loadstring('redis = nil')()", "_G.tostring = nil", "coroutine.create = nil",
		"KEYS[100] = 'leak'", "KEYS.x = 'leak'", "ARGV[1] = 'leak'", "setmetatable(KEYS, {__index = function() return 'leak' end})",
		"KEYS[2] = 'leak'", "KEYS[1] = nil",
	} {
		s, errReply := e.Compile([]byte(attack))
		if errReply != "" {
			t.Fatal(errReply)
		}
		e.Run(nil, h, s, [][]byte{[]byte("k")}, nil, RunOptions{Proto: 2})
		check, _ := e.Compile([]byte("return {type(redis.call), type(string.rep), type(table.insert), type(tostring), tostring(rawget(_G, 'x')), KEYS[1], ('a'):rep(2), tostring(KEYS[100]), tostring(KEYS.x), tostring(ARGV[1]), tostring(KEYS[2]), #KEYS}"))
		got := string(e.Run(nil, h, check, [][]byte{[]byte("k")}, nil, RunOptions{Proto: 2}))
		want := "*12\r\n$8\r\nfunction\r\n$8\r\nfunction\r\n$8\r\nfunction\r\n$8\r\nfunction\r\n$3\r\nnil\r\n$1\r\nk\r\n$2\r\naa\r\n$3\r\nnil\r\n$3\r\nnil\r\n$3\r\nnil\r\n$3\r\nnil\r\n:1\r\n"
		if got != want {
			t.Errorf("after %q: %q", attack, got)
		}
	}
}

// TestFunctionsConcurrent: FCALLs on several goroutines while another goroutine replaces and
// deletes the library (run under -race): every call answers one of the two versions, or
// "Function not found" while it is deleted.
func TestFunctionsConcurrent(t *testing.T) {
	e := New(Config{})
	defer e.Close()
	v := func(n int) []byte {
		return []byte("#!lua name=lib\nredis.register_function('f', function(keys, args) return " + strconv.Itoa(n) + " end)")
	}
	if _, errReply := e.FunctionLoad(nil, v(1), false); errReply != "" {
		t.Fatal(errReply)
	}
	stop := make(chan struct{})
	var changer sync.WaitGroup
	changer.Add(1)
	go func() {
		defer changer.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			switch i % 3 {
			case 0:
				e.FunctionLoad(nil, v(2), true)
			case 1:
				e.FunctionDelete([]byte("lib"))
			default:
				e.FunctionLoad(nil, v(1), false)
			}
		}
	}()
	var wg sync.WaitGroup
	for g := 0; g < 3; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := newMemHost()
			for i := 0; i < 300; i++ {
				switch got := string(e.FCall(nil, h, []byte("f"), nil, nil, RunOptions{Proto: 2})); got {
				case ":1\r\n", ":2\r\n", "-ERR Function not found\r\n":
				default:
					t.Errorf("FCALL: %q", got)
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	changer.Wait()
}

// panicHost panics inside Call.
type panicHost struct{ *memHost }

func (panicHost) Call([][]byte, int, Repl, []byte) []byte { panic("host bug") }

// TestHostPanicPropagates: a panic in the Host reaches Run's caller (whose panic handling
// closes the client), the slot is given back and the engine keeps serving.
func TestHostPanicPropagates(t *testing.T) {
	e := New(Config{})
	defer e.Close()
	s, _ := e.Compile([]byte("local ok = pcall(redis.call, 'GET', 'k') return 1"))
	func() {
		defer func() {
			if p := recover(); p != "host bug" {
				t.Errorf("recovered %v", p)
			}
		}()
		e.Run(nil, panicHost{newMemHost()}, s, nil, nil, RunOptions{Proto: 2})
		t.Error("Run returned")
	}()
	if got := string(e.Run(nil, newMemHost(), s, nil, nil, RunOptions{Proto: 2})); got != ":1\r\n" {
		t.Errorf("after the panic: %q", got)
	}
	e.pool.each(func(sl *slot) {
		if sl.used.Load() {
			t.Error("a slot is still taken")
		}
	})
}

// TestEverythingAtOnce runs EVALs, FCALLs, kills, flushes, function loads and restores from
// several goroutines together (under -race): every reply is one a lone call could give, and
// the engine ends with no slot taken.
func TestEverythingAtOnce(t *testing.T) {
	e := New(Config{BusyThreshold: 5 * time.Millisecond, Tick: time.Millisecond})
	defer e.Close()
	lib := []byte("#!lua name=l\nredis.register_function('f', function(keys) return redis.call('INCR', keys[1]) end)")
	if _, errReply := e.FunctionLoad(nil, lib, false); errReply != "" {
		t.Fatal(errReply)
	}
	dump := e.FunctionDump()
	deadline := time.Now().Add(time.Second)
	var wg sync.WaitGroup
	worker := func(fn func(h *memHost, i int)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := newMemHost()
			for i := 0; time.Now().Before(deadline); i++ {
				fn(h, i)
			}
		}()
	}
	worker(func(h *memHost, i int) { // EVAL, some of them long
		body := "return redis.call('INCR', KEYS[1])"
		if i%50 == 0 {
			body = "local n = 0 for i = 1, 2e5 do n = n + 1 end return n"
		}
		s, errReply := e.Compile([]byte(body))
		if errReply != "" {
			t.Error(errReply)
			return
		}
		got := string(e.Run(nil, h, s, [][]byte{[]byte("k")}, nil, RunOptions{Proto: 2}))
		if !strings.HasPrefix(got, ":") && !strings.HasPrefix(got, "-ERR Script killed by user") {
			t.Errorf("EVAL: %q", got)
		}
	})
	worker(func(h *memHost, i int) { // FCALL
		got := string(e.FCall(nil, h, []byte("f"), [][]byte{[]byte("k")}, nil, RunOptions{Proto: 2}))
		if !strings.HasPrefix(got, ":") && got != "-ERR Function not found\r\n" && !strings.HasPrefix(got, "-ERR Script killed by user") {
			t.Errorf("FCALL: %q", got)
		}
	})
	worker(func(_ *memHost, i int) { // admin
		switch i % 4 {
		case 0:
			switch k := e.Kill(false); k {
			case "", ErrNotBusy, ErrBusyFunction:
			default:
				t.Errorf("SCRIPT KILL: %q", k)
			}
		case 1:
			e.Flush()
		case 2:
			e.FunctionRestore(nil, dump, RestoreReplace)
		default:
			e.Running()
			e.BusyReply()
		}
		time.Sleep(time.Millisecond)
	})
	wg.Wait()
	e.pool.each(func(sl *slot) {
		if sl.used.Load() {
			t.Error("a slot is still taken")
		}
	})
}
