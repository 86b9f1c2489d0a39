package script

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// runAsync runs body in the engine on its own goroutine; the reply arrives on the channel.
func runAsync(e *Engine, h Host, body string) <-chan string {
	out := make(chan string, 1)
	s, errReply := e.Compile([]byte(body))
	if errReply != "" {
		out <- errReply
		return out
	}
	go func() { out <- string(e.Run(nil, h, s, nil, nil, RunOptions{Proto: 2})) }()
	return out
}

func waitBusy(t *testing.T, e *Engine) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !e.Busy() {
		if time.Now().After(deadline) {
			t.Fatal("the script never became busy")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitRedisBusy polls the reference server until it answers BUSY (its script passed the
// threshold), so a loaded machine cannot make the test ask too early.
func waitRedisBusy(t *testing.T, admin *conn) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.HasPrefix(string(admin.do(t, "PING")), "-BUSY") {
		if time.Now().After(deadline) {
			t.Fatal("redis-server never became busy")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func waitReply(t *testing.T, out <-chan string) string {
	t.Helper()
	select {
	case r := <-out:
		return r
	case <-time.After(20 * time.Second):
		t.Fatal("the script did not end")
	}
	return ""
}

// TestKillMatchesRedis kills a busy script on redis-server (busy-reply-threshold 100 ms) and in
// the engine, and compares what SCRIPT KILL and the killed EVAL answer, for loops that try to
// survive the kill through pcall and coroutines.
func TestKillMatchesRedis(t *testing.T) {
	redisAddr(t)
	admin := dial(t, 2)
	admin.do(t, "CONFIG", "SET", "busy-reply-threshold", "100")
	defer admin.do(t, "CONFIG", "SET", "busy-reply-threshold", "5000")
	e := New(Config{BusyThreshold: 100 * time.Millisecond, Tick: 5 * time.Millisecond})
	defer e.Close()
	for _, body := range []string{
		"while true do end",
		"local i = 0\nwhile true do i = i + 1 end",
		"while true do pcall(function() while true do end end) end",
		"local co = coroutine.wrap(function() while true do end end)\nco()",
		"local co = coroutine.create(function() while true do end end)\nwhile true do coroutine.resume(co) end",
	} {
		// redis-server
		runner := dial(t, 2)
		if want := string(admin.do(t, "SCRIPT", "KILL")); want != "-NOTBUSY No scripts in execution right now.\r\n" {
			t.Fatalf("redis SCRIPT KILL while idle: %q", want)
		}
		done := make(chan []byte, 1)
		go func() {
			r, _ := runner.doBytes([][]byte{[]byte("EVAL"), []byte(body), []byte("0")})
			done <- r
		}()
		waitRedisBusy(t, admin)
		killWant := admin.do(t, "SCRIPT", "KILL")
		evalWant := <-done

		// the engine
		if got := e.Kill(false); "-"+got+"\r\n" != "-NOTBUSY No scripts in execution right now.\r\n" {
			t.Fatalf("engine Kill while idle: %q", got)
		}
		out := runAsync(e, newMemHost(), body)
		waitBusy(t, e)
		killGot := "+OK\r\n"
		if k := e.Kill(false); k != "" {
			killGot = "-" + k + "\r\n"
		}
		evalGot := waitReply(t, out)
		if string(killWant) != killGot || string(evalWant) != evalGot {
			t.Errorf("%s:\nredis:  kill %q eval %q\nengine: kill %q eval %q", body, killWant, evalWant, killGot, evalGot)
		}
		if e.Busy() {
			t.Errorf("%s: still busy after the kill", body)
		}
	}
}

// TestUnkillable: a busy script that wrote cannot be killed (neither by SCRIPT KILL nor by
// FUNCTION KILL, as Redis answers), and FUNCTION KILL refuses an EVAL that did not write.
func TestUnkillable(t *testing.T) {
	e := New(Config{BusyThreshold: 50 * time.Millisecond, Tick: 5 * time.Millisecond})
	defer e.Close()
	out := runAsync(e, newMemHost(), "redis.call('SET', 'k', 'v')\nwhile true do end")
	waitBusy(t, e)
	if got := e.Kill(false); got != ErrUnkillable {
		t.Errorf("SCRIPT KILL: %q", got)
	}
	if got := e.Kill(true); got != ErrUnkillable {
		t.Errorf("FUNCTION KILL: %q", got)
	}
	forceStop(e)
	if r := waitReply(t, out); !strings.HasPrefix(r, "-ERR Script killed") {
		t.Errorf("forced stop: %q", r)
	}

	out = runAsync(e, newMemHost(), "while true do end")
	waitBusy(t, e)
	if got := e.Kill(true); got != ErrBusyScript {
		t.Errorf("FUNCTION KILL of an EVAL: %q", got)
	}
	if got := e.Kill(false); got != "" {
		t.Errorf("SCRIPT KILL: %q", got)
	}
	waitReply(t, out)
}

// TestStopRuns: a stopping server ends a busy run even after it wrote (SCRIPT KILL answers
// UNKILLABLE then), tells the caller through RunOptions.Stopped, and ends at once a run started
// after it.
func TestStopRuns(t *testing.T) {
	e := New(Config{BusyThreshold: 50 * time.Millisecond, Tick: 5 * time.Millisecond})
	defer e.Close()
	s, msg := e.Compile([]byte("redis.call('SET', 'k', 'v')\nwhile true do end"))
	if msg != "" {
		t.Fatal(msg)
	}
	type result struct {
		reply   string
		stopped bool
	}
	start := func() <-chan result {
		out := make(chan result, 1)
		go func() {
			var stopped bool
			r := e.Run(nil, newMemHost(), s, nil, nil, RunOptions{Proto: 2, Stopped: &stopped})
			out <- result{string(r), stopped}
		}()
		return out
	}
	out := start()
	waitBusy(t, e)
	if got := e.Kill(false); got != ErrUnkillable {
		t.Fatalf("SCRIPT KILL: %q", got)
	}
	begun := time.Now()
	e.StopRuns()
	for i, out := range []<-chan result{out, start()} {
		select {
		case r := <-out:
			if !r.stopped || !strings.HasPrefix(r.reply, "-"+errStopped+" script: ") {
				t.Errorf("run %d: %q stopped %v", i, r.reply, r.stopped)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("run %d still running 5 s after StopRuns", i)
		}
	}
	t.Logf("both runs ended %v after StopRuns", time.Since(begun))
}

// forceStop stops every running script, written or not (what SHUTDOWN NOSAVE leaves to the
// process; here so a test does not leak its loop).
func forceStop(e *Engine) {
	e.pool.each(func(s *slot) {
		if seq := s.run.seq.Load(); seq&1 == 1 {
			s.run.stop(seq, killedByUser)
		}
	})
}

// TestKillDoesNotLeak: a kill ends only the run it was meant for; the state's next run works.
func TestKillDoesNotLeak(t *testing.T) {
	e := New(Config{BusyThreshold: 30 * time.Millisecond, Tick: 5 * time.Millisecond})
	defer e.Close()
	out := runAsync(e, newMemHost(), "while true do end")
	waitBusy(t, e)
	if k := e.Kill(false); k != "" {
		t.Fatal(k)
	}
	waitReply(t, out)
	for i := 0; i < 100; i++ {
		if r := waitReply(t, runAsync(e, newMemHost(), "return 1")); r != ":1\r\n" {
			t.Fatalf("run %d after a kill: %q", i, r)
		}
	}
}

// TestMemoryCap: a script that grows a table without bound is stopped with an error once the
// heap grew past lua-max-memory, and the process's peak RSS stays under the cap + 100 MB.
func TestMemoryCap(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates the cap")
	}
	t.Run("64MB", func(t *testing.T) { memoryCap(t, 64<<20) })
	t.Run("default", func(t *testing.T) {
		if raceEnabled {
			t.Skip("256 MB under the race detector takes minutes")
		}
		memoryCap(t, defaultMaxMemory)
	})
}

func memoryCap(t *testing.T, capBytes int64) {
	e := New(Config{MaxMemory: capBytes, Tick: 5 * time.Millisecond})
	defer e.Close()
	runtime.GC()
	before := rssPeak(t)
	heapBefore, _ := readHeap()
	var heapPeak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() { // the Go heap's peak, sampled every millisecond
		defer close(sampled)
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
			if h, _ := readHeap(); h > heapPeak.Load() {
				heapPeak.Store(h)
			}
		}
	}()
	for _, body := range []string{
		"local t = {} local i = 0 while true do i = i + 1 t[i] = string.rep('x', 100) .. i end",
		"local t = {} while true do t[#t + 1] = {} end",
		"local s = {} for i = 1, 1e9 do s[i] = i end",
	} {
		start := time.Now()
		r := waitReply(t, runAsync(e, newMemHost(), body))
		if !strings.HasPrefix(r, "-"+errOutOfMemory+" script: ") {
			t.Errorf("%s: %q", body, r)
		}
		t.Logf("%s: stopped after %v", body, time.Since(start))
		runtime.GC()
	}
	close(stop)
	<-sampled
	grew := int64(heapPeak.Load()) - int64(heapBefore)
	t.Logf("Go heap peak grew by %d MB (cap %d MB)", grew>>20, capBytes>>20)
	if grew > capBytes+100<<20 {
		t.Errorf("the heap grew by %d MB, more than the cap + 100 MB", grew>>20)
	}
	if raceEnabled {
		return
	}
	peak := rssPeak(t)
	t.Logf("peak RSS grew by %d MB (cap %d MB)", (peak-before)>>20, capBytes>>20)
	if peak-before > capBytes+100<<20 {
		t.Errorf("peak RSS grew by %d MB, more than the cap + 100 MB", (peak-before)>>20)
	}
}

// rssPeak reads VmHWM (peak resident set) of this process.
func rssPeak(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	t.Skip("no VmHWM")
	return 0
}

// TestCraftedLimits: requests for huge strings and results fail with an error instead of asking
// the process for the memory; the server goes on.
func TestCraftedLimits(t *testing.T) {
	e := New(Config{MaxMemory: 64 << 20})
	defer e.Close()
	for body, want := range map[string]string{
		"return string.rep('x', 2^40)":  "not enough memory",
		"return string.rep('abc', 1e9)": "not enough memory",
		"return #string.rep('x', 1e6)":  ":1000000",
		"local t = {string.rep('x', 2^20)} for i = 1, 200 do t[i] = t[1] end return table.concat(t)": "not enough memory",
		"return unpack({}, 1, 2^31)":                              "too many results to unpack",
		"return unpack({}, -2^31, 2^31)":                          "too many results to unpack",
		"return select('#', unpack({}, 1, 7000))":                 ":7000",
		"local function f(n) return f(n + 1) + 1 end return f(1)": "stack overflow",
		"local s = string.rep('x', 1000) return #s:rep(1e9)":      "not enough memory",
		"return loadstring(string.rep('return ', 1000) .. '1')":   "",
	} {
		s, errReply := e.Compile([]byte(body))
		if errReply != "" {
			t.Fatal(errReply)
		}
		got := string(e.Run(nil, newMemHost(), s, nil, nil, RunOptions{Proto: 2}))
		if !strings.Contains(got, want) {
			t.Errorf("%s: %q, want %q in it", body, got, want)
		}
	}
}

// TestNoGoroutineLeak: Close stops the watchdog, parked or ticking.
func TestNoGoroutineLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e := New(Config{Tick: time.Millisecond})
			s, _ := e.Compile([]byte("return 1"))
			e.Run(nil, newMemHost(), s, nil, nil, RunOptions{Proto: 2})
			time.Sleep(20 * time.Millisecond)
			e.Close()
		}()
	}
	wg.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after Close, %d before", n, before)
	}
}

// TestFunctionKillMatchesRedis: a busy FCALL refuses SCRIPT KILL with the FUNCTION KILL text,
// others get the function's BUSY text, and FUNCTION KILL ends it with Redis's reply.
func TestFunctionKillMatchesRedis(t *testing.T) {
	redisAddr(t)
	admin := dial(t, 2)
	admin.do(t, "CONFIG", "SET", "busy-reply-threshold", "100")
	defer admin.do(t, "CONFIG", "SET", "busy-reply-threshold", "5000")
	const lib = "#!lua name=loop\nredis.register_function('spin', function() while true do end end)"
	admin.do(t, "FUNCTION", "LOAD", "REPLACE", lib)
	runner := dial(t, 2)
	done := make(chan []byte, 1)
	go func() {
		r, _ := runner.doBytes([][]byte{[]byte("FCALL"), []byte("spin"), []byte("0")})
		done <- r
	}()
	waitRedisBusy(t, admin)
	want := [][]byte{admin.do(t, "GET", "x"), admin.do(t, "SCRIPT", "KILL"), admin.do(t, "FUNCTION", "KILL")}
	want = append(want, <-done)
	admin.do(t, "FUNCTION", "FLUSH")

	e := New(Config{BusyThreshold: 100 * time.Millisecond, Tick: 5 * time.Millisecond})
	defer e.Close()
	if _, errReply := e.FunctionLoad(nil, []byte(lib), false); errReply != "" {
		t.Fatal(errReply)
	}
	out := make(chan string, 1)
	go func() { out <- string(e.FCall(nil, newMemHost(), []byte("spin"), nil, nil, RunOptions{Proto: 2})) }()
	waitBusy(t, e)
	reply := func(s string) string {
		if s == "" {
			return "+OK\r\n"
		}
		return "-" + s + "\r\n"
	}
	got := []string{reply(e.BusyReply()), reply(e.Kill(false)), reply(e.Kill(true)), waitReply(t, out)}
	for i := range want {
		if string(want[i]) != got[i] {
			t.Errorf("step %d: redis %q, engine %q", i, want[i], got[i])
		}
	}
}

// TestFunctionLoadTimeout: library code that runs 500 ms is stopped with Redis's text, and
// nothing is registered.
func TestFunctionLoadTimeout(t *testing.T) {
	e := New(Config{Tick: 5 * time.Millisecond})
	defer e.Close()
	start := time.Now()
	_, errReply := e.FunctionLoad(nil, []byte("#!lua name=to\nredis.register_function('f', function() end)\nwhile true do end"), false)
	if errReply != "ERR Error registering functions: ERR FUNCTION LOAD timeout" {
		t.Errorf("reply %q", errReply)
	}
	if d := time.Since(start); d < 450*time.Millisecond || d > 5*time.Second {
		t.Errorf("stopped after %v", d)
	}
	if len(e.FunctionList(nil)) != 0 {
		t.Error("a library was registered")
	}
}

// TestRunning: FUNCTION STATS's data names the function in progress and its duration.
func TestRunning(t *testing.T) {
	e := New(Config{BusyThreshold: 50 * time.Millisecond, Tick: 5 * time.Millisecond})
	defer e.Close()
	if _, errReply := e.FunctionLoad(nil, []byte("#!lua name=l\nredis.register_function('spin', function() while true do end end)"), false); errReply != "" {
		t.Fatal(errReply)
	}
	if libs, fns := e.FunctionCounts(); libs != 1 || fns != 1 {
		t.Errorf("counts %d %d", libs, fns)
	}
	out := make(chan string, 1)
	go func() { out <- string(e.FCall(nil, newMemHost(), []byte("SPIN"), nil, nil, RunOptions{Proto: 2})) }()
	waitBusy(t, e)
	r := e.Running()
	if len(r) != 1 || r[0].Function == nil || r[0].Function.Name != "spin" || r[0].Script != nil || !r[0].Busy || r[0].Duration < 50*time.Millisecond {
		t.Errorf("Running() = %+v", r)
	}
	if k := e.Kill(true); k != "" {
		t.Fatal(k)
	}
	waitReply(t, out)
	if r := e.Running(); len(r) != 0 {
		t.Errorf("after the kill: %+v", r)
	}
}

// TestSetLimits: CONFIG SET of busy-reply-threshold and lua-max-memory applies to a run in
// progress.
func TestSetLimits(t *testing.T) {
	e := New(Config{Tick: 5 * time.Millisecond}) // 5 s threshold, 256 MB cap
	defer e.Close()
	out := runAsync(e, newMemHost(), "while true do end")
	time.Sleep(50 * time.Millisecond)
	if e.Busy() {
		t.Fatal("busy before the threshold")
	}
	e.SetBusyThreshold(20 * time.Millisecond)
	waitBusy(t, e)
	if k := e.Kill(false); k != "" {
		t.Fatal(k)
	}
	waitReply(t, out)

	e.SetMaxMemory(16 << 20)
	r := waitReply(t, runAsync(e, newMemHost(), "local t = {} while true do t[#t + 1] = {} end"))
	if !strings.HasPrefix(r, "-"+errOutOfMemory) {
		t.Errorf("at a 16 MB cap: %q", r)
	}
	e.SetBusyThreshold(0)
	out = runAsync(e, newMemHost(), "while true do end")
	time.Sleep(100 * time.Millisecond)
	if e.Busy() || e.Kill(false) != ErrNotBusy {
		t.Error("busy with the threshold at 0")
	}
	forceStop(e)
	waitReply(t, out)
}
