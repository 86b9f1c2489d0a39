package script

import (
	"strconv"
	"sync"
	"testing"
)

const incrScript = "return redis.call('INCR', KEYS[1])"

// BenchmarkEvalSHA is EVALSHA of the INCR script through memHost: the engine's cost per call
// (lookup by SHA, a pooled state, KEYS, the call, both conversions, the reply).
func BenchmarkEvalSHA(b *testing.B) {
	e := New(Config{})
	defer e.Close()
	s, errReply := e.Compile([]byte(incrScript))
	if errReply != "" {
		b.Fatal(errReply)
	}
	sha := []byte(s.SHA)
	h := newMemHost()
	keys := [][]byte{[]byte("counter")}
	var dst []byte
	b.ReportAllocs()
	for b.Loop() {
		s, _ := e.Lookup(sha)
		dst = e.Run(dst[:0], h, s, keys, nil, RunOptions{Proto: 2})
	}
	if want := ":" + strconv.Itoa(h.calls) + "\r\n"; string(dst) != want {
		b.Fatalf("last reply %q, want %q", dst, want)
	}
}

// BenchmarkEvalSHAParallel runs the same at two goroutines (each its own host and key), to
// show that the states of two cores do not contend: compare ns/op with BenchmarkEvalSHA at
// -cpu 1 and -cpu 2.
func BenchmarkEvalSHAParallel(b *testing.B) {
	e := New(Config{})
	defer e.Close()
	s, errReply := e.Compile([]byte(incrScript))
	if errReply != "" {
		b.Fatal(errReply)
	}
	sha := []byte(s.SHA)
	var mu sync.Mutex
	n := 0
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		mu.Lock()
		n++
		keys := [][]byte{[]byte("counter" + strconv.Itoa(n))}
		mu.Unlock()
		h := newMemHost()
		var dst []byte
		for pb.Next() {
			s, _ := e.Lookup(sha)
			dst = e.Run(dst[:0], h, s, keys, nil, RunOptions{Proto: 2})
		}
	})
}

// BenchmarkLoop measures the interpreter's cost per loop iteration (a FORLOOP and an ADD) with
// the kill check gopher-lua makes before each instruction (our killCtx) and without any context
// (gopher-lua's plain loop, which no kill could stop).
func BenchmarkLoop(b *testing.B) {
	const body = "local n = 0 for i = 1, 100000 do n = n + i end return n"
	for _, withCtx := range []bool{true, false} {
		b.Run("ctx="+strconv.FormatBool(withCtx), func(b *testing.B) {
			e := New(Config{})
			defer e.Close()
			s, _ := e.Compile([]byte(body))
			h := newMemHost()
			sl := e.pool.acquire()
			if !withCtx {
				sl.st.L.RemoveContext()
			}
			e.pool.release(sl)
			var dst []byte
			for b.Loop() {
				dst = e.Run(dst[:0], h, s, nil, nil, RunOptions{Proto: 2})
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/100000, "ns/iteration")
			sl = e.pool.acquire()
			sl.st.L.SetContext(&sl.st.ctx)
			e.pool.release(sl)
		})
	}
}

// BenchmarkConcat compares the rewritten .. (a Go call with Lua 5.1's number formatting,
// concat.go) with gopher-lua's own OP_CONCAT, per concatenation of a string and a number.
func BenchmarkConcat(b *testing.B) {
	const body = "local s for i = 1, 1000 do s = 'key:' .. i end return s"
	e := New(Config{})
	defer e.Close()
	b.Run("rewritten", func(b *testing.B) {
		s, _ := e.Compile([]byte(body))
		h := newMemHost()
		for b.Loop() {
			e.Run(nil, h, s, nil, nil, RunOptions{Proto: 2})
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "ns/concat")
	})
	b.Run("vm", func(b *testing.B) {
		sl := e.pool.acquire()
		defer e.pool.release(sl)
		L := sl.st.L
		fn, err := L.LoadString(body)
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			L.Push(fn)
			L.Call(0, 1)
			L.Pop(1)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "ns/concat")
	})
}

// BenchmarkPool compares taking and giving back a state: the engine's slots (the P's own slot
// first) against a sync.Pool of the same states, at -cpu 1 and 2.
func BenchmarkPool(b *testing.B) {
	b.Run("slots", func(b *testing.B) {
		e := New(Config{})
		defer e.Close()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				e.pool.release(e.pool.acquire())
			}
		})
	})
	b.Run("sync.Pool", func(b *testing.B) {
		e := New(Config{})
		defer e.Close()
		p := sync.Pool{New: func() any { return e.pool.grow() }}
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				p.Put(p.Get())
			}
		})
	})
}

// BenchmarkNewState is the cost of building one interpreter state with its sandbox: what a pool
// that drops states (sync.Pool at every GC) would pay again.
func BenchmarkNewState(b *testing.B) {
	e := New(Config{})
	defer e.Close()
	b.ReportAllocs()
	for b.Loop() {
		st := newState(e, &slot{})
		st.L.Close()
	}
}
